// Package ttlmatrix runs the Time-To-Live contract's data file,
// testdata/ttl/matrix, against one way of reaching Ebb: the engine's API
// in internal/engine's tests, the Go SDK in test/e2e. The file lists its
// directives; this package reads them (with
// github.com/cockroachdb/datadriven), makes the requests through a
// Server, and prints what came back in the file's words. test/js has
// the same runner for the JavaScript SDK.
package ttlmatrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Path returns the data file's path, found from the working directory
// (a package directory while tests run) up to the module root.
func Path(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "ttl", "matrix")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("ttlmatrix: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Server is a way of reaching Ebb. Raw JSON values are nil when the
// property is left out.
type Server interface {
	// CreateContainer creates container id, partition key /pk, in a
	// database of its own.
	CreateContainer(t testing.TB, id string, p Props) (Container, Result)
	// Advance moves the server clock forward.
	Advance(t testing.TB, seconds int64)
	// Now is the server clock in whole epoch seconds.
	Now(t testing.TB) int64
}

// Props are the container properties the file sets.
type Props struct {
	DefaultTTL   json.RawMessage
	IndexingNone bool
}

// Body is the container resource for id with p, partition key /pk, for
// servers reached without an SDK type for it.
func (p Props) Body(id string) []byte {
	body := fmt.Sprintf(`{"id":%q,"partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}`, id)
	if p.DefaultTTL != nil {
		body += `,"defaultTtl":` + string(p.DefaultTTL)
	}
	if p.IndexingNone {
		body += `,"indexingPolicy":{"indexingMode":"none","automatic":false}`
	}
	return []byte(body + "}")
}

// Container is a container on the server. Items are written to the
// partition "p".
type Container interface {
	// Replace replaces the container's properties.
	Replace(t testing.TB, p Props) Result
	// DefaultTTL reads the container's defaultTtl back.
	DefaultTTL(t testing.TB) json.RawMessage
	// Write creates, upserts or replaces item body.
	Write(t testing.TB, kind WriteKind, id string, body []byte, ifMatch string) Result
	// Patch sets path to value.
	Patch(t testing.TB, id, path string, value json.RawMessage, ifMatch string) Result
	Delete(t testing.TB, id, ifMatch string) Result
	Read(t testing.TB, id string) Result
	// Query runs a cross-partition query to its end.
	Query(t testing.TB, sql string) []json.RawMessage
	// ReadFeed reads every item.
	ReadFeed(t testing.TB) []json.RawMessage
}

// WriteKind is a document write.
type WriteKind string

const (
	Create  WriteKind = "create"
	Upsert  WriteKind = "upsert"
	Replace WriteKind = "replace"
)

// Result is what a request did: the status, the resource for a success
// that returns one, and the error text (the service's, without the
// gateway's envelope; see ErrorText) for a failure.
type Result struct {
	Status  int
	Body    json.RawMessage
	Message string
}

// ErrorText takes the text out of a Cosmos error message, which wraps
// it as `Message: {"Errors":["<text>"]}` and more; a message that does
// not is returned as it is.
func ErrorText(message string) string {
	const start = `{"Errors":[`
	i := strings.Index(message, start)
	if i < 0 {
		return message
	}
	var errs []string
	dec := json.NewDecoder(strings.NewReader(message[i+len(start)-1:]))
	if err := dec.Decode(&errs); err != nil || len(errs) == 0 {
		return message
	}
	return errs[0]
}

// Setting names a container's defaultTtl as the portal does: Off,
// On (no default) or On n s.
func Setting(defaultTTL json.RawMessage) string {
	switch s := string(defaultTTL); s {
	case "", "null":
		return "Off"
	case "-1":
		return "On (no default)"
	default:
		return "On " + s + " s"
	}
}

// Run runs the data file against s.
func Run(t *testing.T, s Server) {
	r := &runner{s: s}
	datadriven.RunTest(t, Path(t), func(t *testing.T, d *datadriven.TestData) string {
		return r.do(t, d)
	})
}

type runner struct {
	s Server
	n int // containers created, for fresh names
	// The scenario's container, its creation time, the ids written to
	// it and their last etags.
	c     Container
	t0    int64
	ids   []string
	etags map[string]string
}

func (r *runner) fresh(t testing.TB, p Props) (Container, Result) {
	r.n++
	return r.s.CreateContainer(t, "m"+strconv.Itoa(r.n), p)
}

// Raw returns argument key's value, nil when the directive has none.
func Raw(d *datadriven.TestData, key string) json.RawMessage {
	arg, ok := d.Arg(key)
	if !ok {
		return nil
	}
	if len(arg.Vals) != 1 {
		panic(fmt.Sprintf("%s: %s takes one value", d.Pos, key))
	}
	return json.RawMessage(arg.Vals[0])
}

func props(d *datadriven.TestData) Props {
	none := false
	if arg, ok := d.Arg("indexing"); ok {
		none = len(arg.Vals) == 1 && arg.Vals[0] == "none"
	}
	return Props{DefaultTTL: Raw(d, "defaultTtl"), IndexingNone: none}
}

func (r *runner) do(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "default-ttl":
		return r.defaultTTL(t, Raw(d, "value"))
	case "item-ttl":
		return r.itemTTL(t, Raw(d, "value"))
	case "expiry":
		return r.expiry(t, d)
	case "container":
		c, res := r.fresh(t, props(d))
		if res.Status == 201 {
			r.c, r.t0, r.ids, r.etags = c, r.s.Now(t), nil, map[string]string{}
		}
		return r.show(res)
	case "advance":
		if len(d.CmdArgs) != 1 {
			t.Fatalf("%s: advance takes a number of seconds", d.Pos)
		}
		n, err := strconv.ParseInt(d.CmdArgs[0].Key, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		r.s.Advance(t, n)
		return ""
	}
	if r.c == nil {
		t.Fatalf("%s: %s before any container", d.Pos, d.Cmd)
	}
	if d.Cmd == "visible" {
		ids := r.visible(t, d.Pos)
		if len(ids) == 0 {
			return "none"
		}
		return strings.Join(ids, " ")
	}
	var id string
	if d.Cmd != "replace-container" {
		d.ScanArgs(t, "id", &id)
		if !slices.Contains(r.ids, id) {
			r.ids = append(r.ids, id)
		}
	}
	ifMatch := ""
	if d.HasArg("if-match") {
		ifMatch = r.etags[id]
	}
	var res Result
	switch d.Cmd {
	case "replace-container":
		return r.show(r.c.Replace(t, props(d)))
	case "create", "upsert", "replace":
		res = r.c.Write(t, WriteKind(d.Cmd), id, Item(id, Raw(d, "ttl")), ifMatch)
	case "patch":
		path, value := "/touched", json.RawMessage("true")
		if ttl := Raw(d, "ttl"); ttl != nil {
			path, value = "/ttl", ttl
		}
		res = r.c.Patch(t, id, path, value, ifMatch)
	case "delete":
		res = r.c.Delete(t, id, ifMatch)
	case "read":
		res = r.c.Read(t, id)
		out := r.showItem(t, res)
		if ttl := field(t, res.Body, "ttl"); res.Status == 200 && ttl != nil {
			out += " ttl=" + string(ttl)
		}
		return out
	default:
		t.Fatalf("%s: unknown directive %q", d.Pos, d.Cmd)
	}
	return r.showItem(t, res)
}

// Item is the body the file's items have: id, pk "p" and ttl, if any.
func Item(id string, ttl json.RawMessage) []byte {
	body := fmt.Sprintf(`{"id":%q,"pk":"p"`, id)
	if ttl != nil {
		body += `,"ttl":` + string(ttl)
	}
	return []byte(body + "}")
}

// show prints a result: the status, and a 400's message.
func (r *runner) show(res Result) string {
	if res.Status == 400 {
		return "400 " + res.Message
	}
	return strconv.Itoa(res.Status)
}

// showItem prints the result of an item request: show's, and a
// document's _ts relative to the scenario's start. It remembers the
// document's etag.
func (r *runner) showItem(t testing.TB, res Result) string {
	out := r.show(res)
	if res.Status/100 != 2 || res.Body == nil {
		return out
	}
	var doc struct {
		ID   string `json:"id"`
		Ts   int64  `json:"_ts"`
		ETag string `json:"_etag"`
	}
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatalf("document %s: %v", res.Body, err)
	}
	r.etags[doc.ID] = doc.ETag
	return out + fmt.Sprintf(" _ts=%+d", doc.Ts-r.t0)
}

// field returns a top-level property of a document, nil if it has none.
func field(t testing.TB, doc json.RawMessage, name string) json.RawMessage {
	if doc == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("document %s: %v", doc, err)
	}
	return m[name]
}

func (r *runner) defaultTTL(t *testing.T, value json.RawMessage) string {
	outcome := func(c Container, res Result, ok int) string {
		if res.Status != ok {
			return r.show(res)
		}
		return Setting(c.DefaultTTL(t))
	}
	c, res := r.fresh(t, Props{DefaultTTL: value})
	created := outcome(c, res, 201)
	c, res = r.fresh(t, Props{DefaultTTL: json.RawMessage("5")})
	if res.Status != 201 {
		t.Fatalf("create a container with defaultTtl 5: %+v", res)
	}
	replaced := outcome(c, c.Replace(t, Props{DefaultTTL: value}), 200)
	if after := Setting(c.DefaultTTL(t)); replaced != after && after != "On 5 s" {
		replaced += ", yet the container now reads " + after
	}
	if created != replaced {
		return "create: " + created + "\nreplace: " + replaced
	}
	return created
}

// itemTTL writes ttl value every way into a container with TTL on and
// one with TTL off.
func (r *runner) itemTTL(t *testing.T, value json.RawMessage) string {
	var lines []string
	for _, mode := range []struct {
		name string
		def  json.RawMessage
	}{{"TTL on", json.RawMessage("-1")}, {"TTL off", nil}} {
		c, res := r.fresh(t, Props{DefaultTTL: mode.def})
		if res.Status != 201 {
			t.Fatalf("create a container with defaultTtl %s: %+v", mode.def, res)
		}
		for _, id := range []string{"replace", "patch"} {
			if res := c.Write(t, Create, id, Item(id, nil), ""); res.Status != 201 {
				t.Fatalf("create %s: %+v", id, res)
			}
		}
		got := map[string]Result{
			"create":  c.Write(t, Create, "create", Item("create", value), ""),
			"upsert":  c.Write(t, Upsert, "upsert", Item("upsert", value), ""),
			"replace": c.Write(t, Replace, "replace", Item("replace", value), ""),
			"patch":   c.Patch(t, "patch", "/ttl", value, ""),
		}
		outcomes := map[string]string{}
		for kind, res := range got {
			outcomes[kind] = r.accepted(t, c, kind, value, res)
		}
		if all := outcomes["create"]; outcomes["upsert"] == all && outcomes["replace"] == all && outcomes["patch"] == all {
			lines = append(lines, mode.name+": "+all)
			continue
		}
		var each []string
		for _, kind := range []string{"create", "upsert", "replace", "patch"} {
			each = append(each, kind+" "+outcomes[kind])
		}
		lines = append(lines, mode.name+": "+strings.Join(each, "; "))
	}
	return strings.Join(lines, "\n")
}

// accepted says whether a write of ttl value succeeded and the item
// reads back with that ttl, or how the write failed. Items are named
// after the write: create and upsert make a new one, replace and patch
// change one without ttl, which a failed write must leave alone.
func (r *runner) accepted(t testing.TB, c Container, id string, value json.RawMessage, res Result) string {
	if res.Status != 200 && res.Status != 201 {
		after := c.Read(t, id)
		intact := after.Status == 404
		if id == "replace" || id == "patch" {
			intact = after.Status == 200 && field(t, after.Body, "ttl") == nil
		}
		if !intact {
			return r.show(res) + ", yet the item changed"
		}
		return r.show(res)
	}
	read := c.Read(t, id)
	if read.Status != 200 {
		return fmt.Sprintf("accepted, then read %d", read.Status)
	}
	stored := field(t, read.Body, "ttl")
	if !SameJSON(stored, value) {
		return "accepted, reads back ttl " + string(stored)
	}
	return "accepted"
}

// SameJSON reports whether two JSON texts hold the same value (10 and
// 10.0 do).
func SameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

func (r *runner) expiry(t *testing.T, d *datadriven.TestData) string {
	arg, ok := d.Arg("at")
	if !ok {
		t.Fatalf("%s: expiry needs at=(seconds, ...)", d.Pos)
	}
	c, res := r.fresh(t, Props{DefaultTTL: Raw(d, "defaultTtl")})
	if res.Status != 201 {
		t.Fatalf("%s: create container: %+v", d.Pos, res)
	}
	r.c, r.ids, r.etags = c, []string{"item"}, map[string]string{}
	res = c.Write(t, Create, "item", Item("item", Raw(d, "ttl")), "")
	if res.Status != 201 {
		t.Fatalf("%s: create item: %+v", d.Pos, res)
	}
	var doc struct {
		Ts int64 `json:"_ts"`
	}
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatalf("%s: item %s: %v", d.Pos, res.Body, err)
	}
	var out []string
	for _, v := range arg.Vals {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: at: %v", d.Pos, err)
		}
		r.s.Advance(t, doc.Ts+s-r.s.Now(t))
		state := "gone"
		if len(r.visible(t, d.Pos)) == 1 {
			state = "visible"
		}
		out = append(out, fmt.Sprintf("_ts+%d %s", s, state))
	}
	r.c = nil
	return strings.Join(out, "\n")
}

// visible returns the ids every read path finds, sorted, and fails the
// test if the paths disagree.
func (r *runner) visible(t *testing.T, pos string) []string {
	paths := map[string][]string{}
	var read []string
	for _, id := range r.ids {
		switch res := r.c.Read(t, id); res.Status {
		case 200:
			read = append(read, id)
		case 404:
		default:
			t.Fatalf("%s: read %s: %+v", pos, id, res)
		}
	}
	slices.Sort(read)
	paths["point reads"] = read
	ids := func(docs []json.RawMessage) []string {
		out := []string{}
		for _, doc := range docs {
			var v struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(doc, &v); err != nil {
				t.Fatalf("%s: row %s: %v", pos, doc, err)
			}
			out = append(out, v.ID)
		}
		return out
	}
	paths["SELECT * FROM c ORDER BY c.id"] = ids(r.c.Query(t, "SELECT * FROM c ORDER BY c.id"))
	for name, got := range map[string][]string{
		"SELECT * FROM c": ids(r.c.Query(t, "SELECT * FROM c")),
		"read feed":       ids(r.c.ReadFeed(t)),
	} {
		slices.Sort(got)
		paths[name] = got
	}
	count := r.c.Query(t, "SELECT VALUE COUNT(1) FROM c")
	want := strconv.Itoa(len(read))
	for _, got := range paths {
		if !slices.Equal(got, read) || len(count) != 1 || string(count[0]) != want {
			t.Fatalf("%s: read paths disagree: %v; SELECT VALUE COUNT(1) FROM c: %s", pos, paths, count)
		}
	}
	return read
}
