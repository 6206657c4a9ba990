package feed

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

var testRID = [8]byte{0, 0, 0, 1, 0, 0, 0, 2}

func openStore(t *testing.T) storage.Store {
	t.Helper()
	s, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func update(t *testing.T, s storage.Store, fn func(w storage.Writer) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func pkEnc(v string) []byte {
	return document.PartitionKey{{Kind: document.PKString, Str: v}}.Encode(nil)
}

// fakeItems is the engine's visible-items reader as the feed sees it: it
// answers from a table, so the tests decide visibility, as the engine does.
type fakeItems map[string]fakeItem

type fakeItem struct {
	doc     string
	h       document.ItemHeader
	visible bool
}

func (f fakeItems) Lookup(key []byte) ([]byte, document.ItemHeader, bool, bool, error) {
	it, ok := f[string(key)]
	if !ok {
		return nil, document.ItemHeader{}, false, false, nil
	}
	return []byte(it.doc), it.h, true, it.visible, nil
}

// page runs one scan of req over s, scoped to partition key pk ("" for
// the whole container), with next as the container's next LSN, and
// returns the page and its rows as text.
func page(t *testing.T, s storage.Store, c Container, req Request, pk string, items Items, next uint64) (Page, []string, error) {
	t.Helper()
	var scope []byte
	if pk != "" {
		scope = pkEnc(pk)
	}
	scan, err := NewScan(c, req, scope, func(storage.Reader) Items { return items })
	if err != nil {
		return Page{}, nil, err
	}
	var p Page
	err = s.View(context.Background(), func(r storage.Reader) error {
		p, err = scan.Read(r, next)
		return err
	})
	var rows []string
	for _, r := range p.Rows {
		rows = append(rows, string(r))
	}
	return p, rows, err
}

func TestScanLatest(t *testing.T) {
	s := openStore(t)
	c := Container{RID: testRID, PK: mustPKDef(t, `{"paths":["/pk"],"kind":"Hash"}`)}
	items := fakeItems{}
	// The latest-version index at LSNs 2, 3, 5 and 6; the version at 5
	// has expired, the one at 6 was written a second later than the rest.
	for _, v := range []struct {
		lsn     uint64
		pk, id  string
		ts      int64
		visible bool
	}{
		{2, "p", "a", 100, true},
		{3, "q", "b", 100, true},
		{5, "p", "c", 100, false},
		{6, "p", "d", 101, true},
	} {
		key := keyspace.DocKey(c.RID, pkEnc(v.pk), v.id)
		items[string(key)] = fakeItem{doc: `{"id":"` + v.id + `"}`, h: document.ItemHeader{Ts: v.ts, LSN: v.lsn}, visible: v.visible}
		update(t, s, func(w storage.Writer) error { return w.Set(keyspace.LatestKey(c.RID, v.lsn), LatestValue(c.RID, key)) })
	}
	for _, tc := range []struct {
		name string
		req  Request
		pk   string
		rows string
		etag string
		read int
	}{
		{"everything", Request{}, "", `{"id":"a","_lsn":2} {"id":"b","_lsn":3} {"id":"d","_lsn":6}`, `"7"`, 4},
		{"first-page", Request{MaxItemCount: 1}, "", `{"id":"a","_lsn":2}`, `"3"`, 1},
		{"continuation", Request{IfNoneMatch: `"3"`}, "", `{"id":"b","_lsn":3} {"id":"d","_lsn":6}`, `"7"`, 3},
		{"weak-continuation", Request{IfNoneMatch: `W/"4"`}, "", `{"id":"d","_lsn":6}`, `"7"`, 2},
		{"partition", Request{}, "p", `{"id":"a","_lsn":2} {"id":"d","_lsn":6}`, `"7"`, 3},
		{"since", Request{Since: time.Unix(100, 1)}, "", `{"id":"d","_lsn":6}`, `"7"`, 4},
		{"since-whole-second", Request{Since: time.Unix(100, 0)}, "", `{"id":"a","_lsn":2} {"id":"b","_lsn":3} {"id":"d","_lsn":6}`, `"7"`, 4},
		{"from-now", Request{IfNoneMatch: "*"}, "", ``, `"7"`, 0},
		{"past-the-end", Request{IfNoneMatch: `"9"`}, "", ``, `"9"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, rows, err := page(t, s, c, tc.req, tc.pk, items, 7)
			if err != nil {
				t.Fatalf("%+v: %v", tc.req, err)
			}
			if got := strings.Join(rows, " "); got != tc.rows || p.ETag != tc.etag || p.Loaded != tc.read {
				t.Errorf("%+v:\ngot  %s, etag %s, %d read\nwant %s, etag %s, %d read", tc.req, got, p.ETag, p.Loaded, tc.rows, tc.etag, tc.read)
			}
		})
	}

	// An entry without its item version breaks an invariant: an internal error.
	update(t, s, func(w storage.Writer) error {
		return w.Set(keyspace.LatestKey(c.RID, 8), LatestValue(c.RID, keyspace.DocKey(c.RID, pkEnc("p"), "gone")))
	})
	_, _, err := page(t, s, c, Request{}, "", items, 9)
	if err == nil || !strings.Contains(err.Error(), "latest-version entry 8") || dberr.IsKind(err, dberr.KindNotFound) {
		t.Errorf("entry without its item: got %v, want an internal error naming entry 8", err)
	}
}

func TestScanLog(t *testing.T) {
	s := openStore(t)
	c := Container{RID: testRID, PK: mustPKDef(t, `{"paths":["/pk"],"kind":"Hash"}`), Retention: 60}
	for lsn, pk := range map[uint64]string{4: "p", 5: "q", 6: "p"} {
		rec := Record{Op: OpCreate, LSN: lsn, Crts: 100, Current: []byte(`{}`), PKEnc: pkEnc(pk)}
		update(t, s, func(w storage.Writer) error { return w.Set(keyspace.LogKey(c.RID, lsn), rec.Encode(c.PK)) })
	}
	row := func(lsn string) string {
		return `{"current":{"_lsn":` + lsn + `},"metadata":{"operationType":"create","lsn":` + lsn + `,"crts":100}}`
	}
	for _, tc := range []struct {
		name string
		req  Request
		pk   string
		rows []string
		etag string
		read int // every record read counts, in scope or not
	}{
		{"all", Request{IfNoneMatch: `"1"`}, "", []string{row("4"), row("5"), row("6")}, `"7"`, 3},
		{"page", Request{IfNoneMatch: `"1"`, MaxItemCount: 2}, "", []string{row("4"), row("5")}, `"6"`, 2},
		{"partition", Request{IfNoneMatch: `"1"`}, "q", []string{row("5")}, `"7"`, 3},
		{"from-now", Request{IfNoneMatch: `*`}, "", nil, `"7"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Mode = AllVersionsAndDeletes
			p, rows, err := page(t, s, c, tc.req, tc.pk, nil, 7)
			if err != nil {
				t.Fatalf("%+v: %v", tc.req, err)
			}
			if strings.Join(rows, "\n") != strings.Join(tc.rows, "\n") || p.ETag != tc.etag || p.Loaded != tc.read {
				t.Errorf("%+v:\ngot  %q, etag %s, %d read\nwant %q, etag %s, %d read", tc.req, rows, p.ETag, p.Loaded, tc.rows, tc.etag, tc.read)
			}
		})
	}

	// After a trim, a continuation from before it is refused.
	update(t, s, func(w storage.Writer) error {
		return w.Set(keyspace.LogTrimKey(c.RID, 0), binary.BigEndian.AppendUint64(nil, 5))
	})
	_, _, err := page(t, s, c, Request{Mode: AllVersionsAndDeletes, IfNoneMatch: `"4"`}, "", nil, 7)
	want := "You must read the change feed from within the retention period. The change feed continuation (LSN 4) is older than the container's change feed retention of 60 minutes: changes before LSN 5 were removed. Start again from now (If-None-Match: *)."
	if !dberr.IsKind(err, dberr.KindBadRequest) || err.Error() != want {
		t.Errorf("continuation before the trim: got %v, want %q", err, want)
	}
	if _, rows, err := page(t, s, c, Request{Mode: AllVersionsAndDeletes, IfNoneMatch: `"5"`}, "", nil, 7); err != nil || len(rows) != 2 {
		t.Errorf("continuation at the trim: got %d rows, %v; want 2", len(rows), err)
	}
}

func TestParseContinuation(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  bool
	}{
		{"", 0, false},
		{"*", 0, false},
		{`"42"`, 42, false},
		{`W/"42"`, 42, false},
		{`42`, 42, false},
		{`"0"`, 0, true},
		{`"-1"`, 0, true},
		{`"00000000-0000-0000-0000-000000000001"`, 0, true},
	} {
		got, err := ParseContinuation(tc.in)
		if got != tc.want || (err != nil) != tc.err || (err != nil && !dberr.IsKind(err, dberr.KindBadRequest)) {
			t.Errorf("ParseContinuation(%q): got %d, %v; want %d (error %v)", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "Invalid Continuation Token") {
			t.Errorf("ParseContinuation(%q): the message %q does not start with the service's \"Invalid Continuation Token\"", tc.in, err)
		}
		if err == nil && tc.want != 0 && etag(got) != `"42"` {
			t.Errorf("etag(%d) = %s, want %q", got, etag(got), `"42"`)
		}
	}
}

func TestCheckRequest(t *testing.T) {
	logged := Container{Retention: 60}
	for _, tc := range []struct {
		name string
		c    Container
		req  Request
		err  string // a prefix of the message; "" for none
	}{
		{"latest-without-log", Container{}, Request{}, ""},
		{"all-versions-without-log", Container{}, Request{Mode: AllVersionsAndDeletes, IfNoneMatch: "*"}, "The all versions and deletes change feed (A-IM: Full-Fidelity Feed) needs a change feed policy"},
		{"all-versions-since", logged, Request{Mode: AllVersionsAndDeletes, IfNoneMatch: "*", Since: time.Unix(1, 0)}, "The all versions and deletes change feed cannot start from a point in time"},
		{"all-versions-from-beginning", logged, Request{Mode: AllVersionsAndDeletes}, "You must read the change feed from within the retention period. The all versions and deletes change feed cannot start from the beginning"},
		{"all-versions-from-now", logged, Request{Mode: AllVersionsAndDeletes, IfNoneMatch: "*"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRequest(tc.c, tc.req)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.err != "" && (!dberr.IsKind(err, dberr.KindBadRequest) || !strings.HasPrefix(err.Error(), tc.err)):
				t.Errorf("got %v, want a bad request starting %q", err, tc.err)
			}
		})
	}
}
