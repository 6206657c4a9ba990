package feed

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
)

func mustPKDef(t *testing.T, raw string) document.PKDef {
	t.Helper()
	def, err := document.ParsePKDef([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return def
}

func TestRecordEncode(t *testing.T) {
	hash := mustPKDef(t, `{"paths":["/pk"],"kind":"Hash"}`)
	multi := mustPKDef(t, `{"paths":["/a","/b/c","/d"],"kind":"MultiHash","version":2}`)
	str := func(s string) document.PKComponent { return document.PKComponent{Kind: document.PKString, Str: s} }
	for _, tc := range []struct {
		name string
		def  document.PKDef
		rec  Record
		want string
	}{
		{
			name: "create",
			def:  hash,
			rec:  Record{Op: OpCreate, LSN: 7, Crts: 1700000000, Current: []byte(`{"id":"a","pk":"p"}`), ID: "a", PKEnc: document.PartitionKey{str("p")}.Encode(nil)},
			want: `{"current":{"id":"a","pk":"p","_lsn":7},"metadata":{"operationType":"create","lsn":7,"crts":1700000000}}`,
		},
		{
			name: "replace",
			def:  hash,
			rec:  Record{Op: OpReplace, LSN: 9, Crts: 1700000001, PreviousLSN: 7, Current: []byte(`{"id":"a"}`), ID: "a", PKEnc: document.PartitionKey{str("p")}.Encode(nil)},
			want: `{"current":{"id":"a","_lsn":9},"metadata":{"operationType":"replace","lsn":9,"crts":1700000001,"previousImageLSN":7}}`,
		},
		{
			name: "delete",
			def:  hash,
			rec:  Record{Op: OpDelete, LSN: 10, Crts: 1700000002, PreviousLSN: 9, Previous: []byte(`{"id":"a"}`), ID: "a", PKEnc: document.PartitionKey{str("p")}.Encode(nil)},
			want: `{"previous":{"id":"a","_lsn":9},"metadata":{"operationType":"delete","lsn":10,"crts":1700000002,"previousImageLSN":9,"timeToLiveExpired":false,"id":"a","partitionKey":{"pk":"p"}}}`,
		},
		{
			name: "expiry-hierarchical-key-with-none",
			def:  multi,
			rec: Record{Op: OpDelete, LSN: 3, Crts: 5, PreviousLSN: 2, Previous: []byte(`{}`), Expired: true, ID: `q"1`,
				PKEnc: document.PartitionKey{str("x"), {Kind: document.PKNone}, {Kind: document.PKNumber, Num: 1.5}}.Encode(nil)},
			want: `{"previous":{"_lsn":2},"metadata":{"operationType":"delete","lsn":3,"crts":5,"previousImageLSN":2,"timeToLiveExpired":true,"id":"q\"1","partitionKey":{"a":"x","d":1.5}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.rec.Encode(tc.def)
			crts, pkEnc, doc, err := decodeRecord(v)
			if err != nil {
				t.Fatalf("decodeRecord(Encode(%+v)): %v", tc.rec, err)
			}
			if string(doc) != tc.want {
				t.Errorf("record JSON:\ngot  %s\nwant %s", doc, tc.want)
			}
			if !json.Valid(doc) {
				t.Errorf("record JSON %s is not valid JSON", doc)
			}
			if crts != tc.rec.Crts || !bytes.Equal(pkEnc, tc.rec.PKEnc) {
				t.Errorf("header: got crts %d, pk %x; want %d, %x", crts, pkEnc, tc.rec.Crts, tc.rec.PKEnc)
			}
		})
	}
}

func TestDecodeRecordCorrupt(t *testing.T) {
	good := Record{Op: OpCreate, LSN: 1, Current: []byte(`{}`), PKEnc: []byte{document.PKNull}}.Encode(document.PKDef{})
	for _, tc := range []struct {
		name string
		v    []byte
	}{
		{"empty", nil},
		{"short", good[:8]},
		{"version", append([]byte{2}, good[1:]...)},
		{"pk-longer-than-value", append(append([]byte{}, good[:9]...), 0x7f)},
		{"bad-varint", append(append([]byte{}, good[:9]...), 0xff)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := decodeRecord(tc.v); err == nil {
				t.Errorf("decodeRecord(%x): got no error, want one", tc.v)
			}
		})
	}
}

func TestAppendWithLSN(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{}`, `{"_lsn":5}`},
		{`{"id":"a"}`, `{"id":"a","_lsn":5}`},
	} {
		if got := appendWithLSN([]byte("x"), []byte(tc.doc), 5); string(got) != "x"+tc.want {
			t.Errorf("appendWithLSN(%s): got %s, want x%s", tc.doc, got, tc.want)
		}
	}
}

func TestLatestValue(t *testing.T) {
	rid := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	pk := document.PartitionKey{{Kind: document.PKString, Str: "p"}}.Encode(nil)
	key := keyspace.DocKey(rid, pk, "a")
	got := LatestValue(rid, key)
	if want := key[1+8:]; !bytes.Equal(got, want) {
		t.Errorf("LatestValue: got %x, want %x (the key after its doc prefix)", got, want)
	}
}
