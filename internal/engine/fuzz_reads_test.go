package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The form bits of FuzzReadsAgree choose how its document is written.
const (
	formRaw         = 1 << iota // the body is extra, nothing else
	formEscapeKeys              // member names as \u escapes ("\u0069\u0064")
	formEscapeIDs               // the id's characters as \u escapes
	formDupID                   // a second "id"
	formDupPK                   // a second "pk"
	formDupNested               // an object that repeats a name
	formExtraNested             // extra inside "x":{…} instead of among the members
	formIDLast                  // the id after the other members
	formPK0                     // three bits: the kind of partition key
	formPK1
	formPK2
	formTTL0 // two bits: the kind of ttl
	formTTL1
	formSpace // white space around every token
)

// buildDoc writes FuzzReadsAgree's document: id, pk and ttl in the forms
// form chooses, and extra (JSON or not) spliced in.
func buildDoc(id, pk string, ttl int64, extra string, form uint16) string {
	if form&formRaw != 0 {
		return extra
	}
	sp := ""
	if form&formSpace != 0 {
		sp = " \n\t"
	}
	var members []string
	member := func(name, val string) {
		if form&formEscapeKeys != 0 {
			name = escapeAll(name)
		} else {
			name = quote(name)
		}
		members = append(members, sp+name+sp+":"+sp+val+sp)
	}
	idVal := quote(id)
	if form&formEscapeIDs != 0 {
		idVal = escapeAll(id)
	}
	if form&formIDLast == 0 {
		member("id", idVal)
	}
	switch (form >> 8) & 7 {
	case 0:
		member("pk", quote(pk))
	case 1:
		member("pk", strconv.FormatInt(ttl, 10))
	case 2:
		member("pk", "true")
	case 3:
		member("pk", "null")
	case 4: // no partition key
	case 5:
		member("pk", `{"a":`+quote(pk)+`}`)
	case 6:
		member("pk", strconv.FormatInt(ttl, 10)+".5e0")
	case 7:
		member("pk", "["+quote(pk)+"]")
	}
	switch (form >> 11) & 3 {
	case 1:
		member("ttl", strconv.FormatInt(ttl, 10))
	case 2:
		member("ttl", strconv.FormatInt(ttl, 10)+".5")
	case 3:
		member("ttl", quote(strconv.FormatInt(ttl, 10)))
	}
	if form&formDupID != 0 {
		member("id", quote(id+"-2"))
	}
	if form&formDupPK != 0 {
		member("pk", quote(pk+"-2"))
	}
	if form&formDupNested != 0 {
		member("n", `{"a":1,"b":{"c":[{"d":1,"d":2}]}}`)
	}
	if extra != "" {
		if form&formExtraNested != 0 {
			members = append(members, `"x":{`+extra+`}`)
		} else {
			members = append(members, extra)
		}
	}
	if form&formIDLast != 0 {
		member("id", idVal)
	}
	return "{" + strings.Join(members, ",") + "}"
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// escapeAll writes s as a JSON string with every character a \u escape.
func escapeAll(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r > 0xFFFF {
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

// itemView is what one read path says an item's id, partition key and
// ttl are, as JSON texts ("" when absent).
type itemView struct{ id, pk, ttl string }

// badValue starts what viewOf says for a value it cannot read; no JSON
// text starts with it.
const badValue = "\x00"

// viewOf reads id, pk and ttl out of an item or a projection with
// encoding/json, a reader independent of Ebb's.
func viewOf(doc []byte) (itemView, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		return itemView{}, err
	}
	canon := func(raw json.RawMessage) string {
		if raw == nil {
			return ""
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return badValue + err.Error()
		}
		if n, ok := v.(json.Number); ok {
			// 1, 1.0 and 1e0 are one number to every reader.
			f, err := n.Float64()
			if err != nil {
				return badValue + err.Error()
			}
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	return itemView{id: canon(m["id"]), pk: canon(m["pk"]), ttl: canon(m["ttl"])}, nil
}

// FuzzReadsAgree writes one document built from the fuzz input into a
// container with a partition key path and TTL on. The write must either
// be refused with a client error (4xx) or be read alike by every read
// path: the write's own response, a point read, a query that projects
// id, pk and ttl, a query the index answers (WHERE c.id = @id) and the
// change feed must all see the id, partition key and ttl that
// encoding/json reads from the body.
func FuzzReadsAgree(f *testing.F) {
	// The repeated and escaped names are in testdata/fuzz/FuzzReadsAgree;
	// these seeds cover the other shapes of id, partition key and ttl.
	for _, s := range []struct {
		id, pk string
		ttl    int64
		extra  string
		form   uint16
	}{
		{"a", "p", 10, "", 1 << 11},
		{"a", "p", 3, "", 1<<8 | 1<<11},
		{"a", "p", 3, "", 2<<8 | formSpace},
		{"a", "p", 0, "", 3<<8 | formSpace},
		{"a", "p", 0, "", 4 << 8},
		{"a", "p", 0, "", 5 << 8},
		{"a", "p", 3, "", 6 << 8},
		{"a", "p", 0, "", 7 << 8},
		{"a/b#c?d", "p", 2, "", 2 << 11},
		{"a", "p", 2, "", 3 << 11},
		{"a", "", 0, "{\"id\":\"a\",\"pk\":\"p\",\"\xff\":1}", formRaw},
		{"", "p", 0, "", 0},
	} {
		f.Add(s.id, s.pk, s.ttl, s.extra, s.form)
	}
	e, _ := newTestEngine(f)
	ctx := context.Background()
	if _, err := e.CreateDatabase(ctx, []byte(`{"id":"db"}`), ThroughputHeaders{}); err != nil {
		f.Fatal(err)
	}
	n := 0
	f.Fuzz(func(t *testing.T, id, pk string, ttl int64, extra string, form uint16) {
		// Each input gets its own container, so that nothing an earlier
		// input left behind can answer for this one.
		n++
		coll := ItemRef{DB: "db", Coll: "c" + strconv.Itoa(n)}
		if _, err := e.CreateContainer(ctx, "db", []byte(`{"id":"`+coll.Coll+`","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":-1}`), ThroughputHeaders{}); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if _, err := e.DeleteContainer(ctx, "db", coll.Coll); err != nil {
				t.Fatal(err)
			}
		}()
		body := buildDoc(id, pk, ttl, extra, form)
		res, err := e.WriteItem(ctx, coll, Upsert, []byte(body), "")
		if err != nil {
			var ee *Error
			if !errors.As(err, &ee) || ee.Kind == KindUnavailable {
				t.Fatalf("%q: a server error, not a client one: %v", body, err)
			}
			return
		}
		want, err := viewOf([]byte(body))
		if err != nil {
			t.Fatalf("%q was stored, but encoding/json cannot read it: %v", body, err)
		}
		if want.id == "" || strings.HasPrefix(want.id, badValue) || strings.HasPrefix(want.pk, badValue) || strings.HasPrefix(want.ttl, badValue) {
			t.Fatalf("%q was stored with id %s, pk %s, ttl %s", body, want.id, want.pk, want.ttl)
		}
		if !json.Valid([]byte(body)) || !utf8.ValidString(body) {
			t.Fatalf("%q is not valid JSON in UTF-8, but was stored", body)
		}
		var itemID string
		_ = json.Unmarshal([]byte(want.id), &itemID)
		pkHeader := "[" + want.pk + "]"
		if want.pk == "" || want.pk[0] == '{' || want.pk[0] == '[' {
			// No partition key value, or one that is not a primitive:
			// the item is stored under the None key, as the service does.
			pkHeader = "[{}]"
		}
		item := ItemRef{DB: "db", Coll: coll.Coll, ID: itemID, PK: pkHeader, HasPK: true}

		check := func(path string, doc []byte) {
			t.Helper()
			got, err := viewOf(doc)
			if err != nil {
				t.Fatalf("%q: the %s returned %s, which does not decode: %v", body, path, doc, err)
			}
			if got != want {
				t.Fatalf("%q: the %s sees id %s, pk %s, ttl %s; the body says id %s, pk %s, ttl %s", body, path, got.id, got.pk, got.ttl, want.id, want.pk, want.ttl)
			}
		}
		one := func(path string, rows [][]byte, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("%q: %s: %v", body, path, err)
			}
			if len(rows) != 1 {
				t.Fatalf("%q: the %s returned %d rows, want 1: %s", body, path, len(rows), bytes.Join(rows, []byte(",")))
			}
			check(path, rows[0])
		}

		check("write's response", res.Body)
		read, err := e.ReadItem(ctx, item, "")
		if err != nil {
			t.Fatalf("%q: point read of id %s in %s: %v", body, want.id, pkHeader, err)
		}
		check("point read", read.Body)

		q, err := e.QueryItems(ctx, QueryRequest{Ref: coll, CrossPartition: true, RangeID: "0",
			Body: queryBody("SELECT c.id, c.pk, c.ttl FROM c")})
		one("projection", q.Rows(), err)

		q, err = e.QueryItems(ctx, QueryRequest{Ref: coll, CrossPartition: true, RangeID: "0",
			Body: queryBody("SELECT c.id, c.pk, c.ttl FROM c WHERE c.id = @id", "@id", itemID)})
		one("index query", q.Rows(), err)
		if !usedIndex(q) {
			t.Fatalf("%q: WHERE c.id = @id was not answered by the index: %q", body, q.IndexMetrics)
		}

		cf, err := e.ChangeFeed(ctx, ChangeFeedRequest{Ref: coll, Mode: LatestVersion})
		one("change feed", cf.Rows, err)
	})
}
