package engine

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// TestChangesSince: the writes and removals since an LSN come in LSN
// order, a removal and a re-creation of one item included, and the log
// of removals keeps only its window.
func TestChangesSince(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},`+
		`"fullTextPolicy":{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/t"}]}}`)
	ctx := context.Background()
	del := func(id string) {
		t.Helper()
		if _, err := e.DeleteItem(ctx, ItemRef{DB: "db", Coll: "c", ID: id, PK: `["p"]`, HasPK: true}, ""); err != nil {
			t.Fatal(err)
		}
	}
	write(t, e, "c", `{"id":"a","pk":"p","t":"x"}`)
	write(t, e, "c", `{"id":"b","pk":"p","t":"x"}`)
	c := e.catalogSnapshot().dbs["db"].colls["c"]
	var from uint64
	if err := e.store.View(ctx, func(r storage.Reader) error {
		st, err := readPartitionState(r, c.rid, 0)
		from = st.lsn + 1
		return err
	}); err != nil {
		t.Fatal(err)
	}
	del("a")
	write(t, e, "c", `{"id":"a","pk":"p","t":"y"}`)
	del("b")
	write(t, e, "c", `{"id":"c","pk":"p","t":"z"}`)
	var got []string
	err := e.store.View(ctx, func(r storage.Reader) error {
		m := e.workMeter(ctx, e.queryClock.Elapsed(), 0, "")
		return changesSince(r, c, from, from+10, m, func(key []byte, gone bool) error {
			// The ids are one letter, the key's last one.
			id := key[bytes.LastIndexFunc(key, unicode.IsLetter)]
			got = append(got, fmt.Sprintf("%c:%v", id, gone))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a:true a:false b:true c:false"; strings.Join(got, " ") != want {
		t.Fatalf("changes %q, want %q", strings.Join(got, " "), want)
	}

	// The log keeps the removals of the last goneWindow LSNs.
	err = e.store.Update(ctx, func(w storage.Writer) error {
		key := keyspace.DocKey(c.rid, []byte("p"), "old")
		for _, lsn := range []uint64{1, 2, goneTrimEvery + 1, goneWindow + goneTrimEvery} {
			if err := recordGone(w, c, lsn, key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var kept []uint64
	err = e.store.View(ctx, func(r storage.Reader) error {
		p := keyspace.CollPrefix(keyspace.Gone, c.rid)
		it := r.Scan(p, keys.PrefixEnd(p), false)
		defer it.Close()
		for it.Next() {
			var lsn uint64
			for _, b := range it.Key()[len(p):] {
				lsn = lsn<<8 | uint64(b)
			}
			kept = append(kept, lsn)
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(kept) != fmt.Sprint([]uint64{goneTrimEvery + 1, goneWindow + goneTrimEvery}) {
		t.Fatalf("removals kept at LSNs %v", kept)
	}

	// Removals that are never at a multiple of goneTrimEvery (every
	// other LSN, the odd ones, as a queue's deletes between its creates)
	// are trimmed too.
	const last = 3*goneWindow + 1
	err = e.store.Update(ctx, func(w storage.Writer) error {
		key := keyspace.DocKey(c.rid, []byte("p"), "old")
		for lsn := uint64(goneWindow + goneTrimEvery + 1); lsn <= last; lsn += 2 {
			if err := recordGone(w, c, lsn, key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.store.View(ctx, func(r storage.Reader) error {
		it := r.Scan(keyspace.GoneKey(c.rid, 0), keyspace.GoneKey(c.rid, last-goneWindow-goneTrimEvery*4), false)
		defer it.Close()
		if it.Next() {
			t.Errorf("a removal at LSN key %x is kept, far out of the window", it.Key())
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}
