package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
)

// memCollection is a Collection over a map, for the API's mechanics.
type memCollection struct {
	docs  map[string]string
	calls atomic.Int64
}

func newMem() *memCollection { return &memCollection{docs: map[string]string{}} }

func (m *memCollection) SelfLink() string { return "dbs/AA==/colls/AAAA/" }
func (m *memCollection) AltLink() string  { return "dbs/db/colls/c" }
func (m *memCollection) SizeInMB() int    { return 0 }
func (m *memCollection) MaxSizeInMB() int { return 10240 }

func docID(doc []byte) string {
	var d struct{ ID string }
	_ = json.Unmarshal(doc, &d)
	return d.ID
}

func (m *memCollection) Create(link string, doc []byte, autoID bool) ([]byte, error) {
	m.calls.Add(1)
	id := docID(doc)
	if _, ok := m.docs[id]; ok {
		return nil, &OpError{Status: 409, Message: "Entity with the specified id already exists in the system."}
	}
	m.docs[id] = string(doc)
	return doc, nil
}

func (m *memCollection) Upsert(link string, doc []byte, autoID bool, ifMatch string) ([]byte, error) {
	m.docs[docID(doc)] = string(doc)
	return doc, nil
}

func (m *memCollection) Replace(link string, doc []byte, ifMatch string) ([]byte, error) {
	return m.Upsert(link, doc, false, ifMatch)
}

func (m *memCollection) Delete(link string, ifMatch string) error {
	id := link[strings.LastIndex(link, "/")+1:]
	if _, ok := m.docs[id]; !ok {
		return &OpError{Status: 404, Message: "Entity with the specified id does not exist in the system."}
	}
	delete(m.docs, id)
	return nil
}

func (m *memCollection) Read(link string, ifNoneMatch string) ([]byte, error) {
	id := link[strings.LastIndex(link, "/")+1:]
	d, ok := m.docs[id]
	if !ok {
		return nil, &OpError{Status: 404, Message: "Entity with the specified id does not exist in the system."}
	}
	return []byte(d), nil
}

// Query returns the documents in id order, two per page.
func (m *memCollection) Query(link string, query []byte, pageSize int, continuation string) ([]byte, string, error) {
	ids := make([]string, 0, len(m.docs))
	for id := range m.docs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	start := 0
	if continuation != "" {
		fmt.Sscan(continuation, &start)
	}
	end, next := min(start+2, len(ids)), ""
	if end < len(ids) {
		next = fmt.Sprint(end)
	}
	rows := []string{}
	for _, id := range ids[start:end] {
		rows = append(rows, m.docs[id])
	}
	return []byte("[" + strings.Join(rows, ",") + "]"), next, nil
}

func run(t *testing.T, r *Runner, coll Collection, src, args string) (Result, error) {
	t.Helper()
	return r.Run(nil, Call{Kind: "stored procedure", ID: "p", Version: src, Source: src, Args: []byte(args), Collection: coll})
}

func newRunner(b Budgets) (*Runner, *clock.Manual) {
	c := clock.NewManual(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	return NewRunner(b, c), c
}

func TestProcedures(t *testing.T) {
	for _, tc := range []struct {
		name, src, args string
		want            string // the response body, or the error's message prefix
		wantErr         bool
		sub             int
	}{
		{name: "set body", src: `function (a, b) { getContext().getResponse().setBody({sum: a + b}); }`, args: `[1, 2]`, want: `{"sum":3}`},
		{name: "no body", src: `function () {}`, args: `[]`, want: ``},
		{name: "arrow", src: `() => getContext().getResponse().setBody("hi")`, args: `[]`, want: `"hi"`},
		{name: "callbacks run after the caller returns", src: `function () {
			var r = getContext().getResponse(), c = getContext().getCollection(), order = [];
			var ok = c.createDocument(c.getSelfLink(), {id: "a"}, function (err, doc) { order.push("cb " + doc.id); r.setBody(order); });
			order.push("after " + ok);
		}`, args: `[]`, want: `["after true","cb a"]`},
		{name: "error to callback", src: `function () {
			var c = getContext().getCollection();
			c.createDocument(c.getSelfLink(), {id: "a"});
			c.createDocument(c.getSelfLink(), {id: "a"}, function (err) {
				getContext().getResponse().setBody([err.number, err.number === ErrorCodes.Conflict, JSON.parse(err.message).Errors[0]]);
			});
		}`, args: `[]`, want: `[409,true,"Entity with the specified id already exists in the system."]`},
		{name: "error without callback throws", src: `function () {
			var c = getContext().getCollection();
			c.createDocument(c.getSelfLink(), {id: "a"});
			c.createDocument(c.getSelfLink(), {id: "a"});
		}`, args: `[]`, wantErr: true, sub: 409, want: `Encountered exception while executing function. Exception = Error: {"Errors":["Entity with the specified id already exists in the system."]}`},
		{name: "stack trace", src: `function () {
			function inner() { throw new Error("deep"); }
			inner();
		}`, args: `[]`, wantErr: true, want: "Encountered exception while executing function. Exception = Error: deep\r\nStack trace: Error: deep\n\tat inner (p:2:"},
		{name: "thrown string", src: `function () { throw "nope"; }`, args: `[]`, wantErr: true, want: `Encountered exception while executing function. Exception = "nope"`},
		{name: "numbered error", src: `function () { throw new Error(404, "Document not found"); }`, args: `[]`, wantErr: true, sub: 404, want: `Encountered exception while executing function. Exception = Error: Document not found`},
		{name: "error subclass", src: `function () { class E extends Error {}; var e = new E("x"); getContext().getResponse().setBody([e instanceof E, e instanceof Error, e.message]); }`, args: `[]`, want: `[true,true,"x"]`},
		{name: "abort", src: `function () { getContext().abort(new Error("stop")); }`, args: `[]`, wantErr: true, want: `Encountered exception while executing function. Exception = Error: stop`},
		{name: "query pages", src: `function () {
			var c = getContext().getCollection(), ids = [];
			["a", "b", "c"].forEach(function (id) { c.createDocument(c.getSelfLink(), {id: id}); });
			function page(cont) {
				c.queryDocuments(c.getSelfLink(), "SELECT * FROM c", {continuation: cont}, function (err, docs, opts) {
					if (err) throw err;
					docs.forEach(function (d) { ids.push(d.id); });
					if (opts.continuation) page(opts.continuation); else getContext().getResponse().setBody(ids);
				});
			}
			page();
		}`, args: `[]`, want: `["a","b","c"]`},
		{name: "query api", src: `function () {
			var c = getContext().getCollection();
			[3, 1, 2].forEach(function (n) { c.createDocument(c.getSelfLink(), {id: "d" + n, n: n, tags: [n, [n]]}); });
			__.chain().filter(function (d) { return d.n > 1; }).sortByDescending(function (d) { return d.n; }).pluck("id").value(function (err, ids) {
				__.filter(function (d) { return d.n === 1; }, function (err, one) {
					__.chain().map(function (d) { return d.tags; }).flatten().value(function (err, flat) {
						__.chain().map(function (d) { return d.tags; }).flatten(true).value(function (err, shallow) {
							getContext().getResponse().setBody({ids: ids, one: one.map(function (d) { return d.id; }), flat: flat, shallow: shallow.length});
						});
					});
				});
			});
		}`, args: `[]`, want: `{"ids":["d3","d2"],"one":["d1"],"flat":[1,1,2,2,3,3],"shallow":6}`},
		{name: "not a function", src: `42`, args: `[]`, wantErr: true, want: `The stored procedure 'p' does not compile: the body must be one JavaScript function`},
		{name: "trailing semicolon and comments", src: "// greets\nfunction hi() { getContext().getResponse().setBody('hi'); }; // done", args: `[]`, want: `"hi"`},
		{name: "no require", src: `function () { require("fs"); }`, args: `[]`, wantErr: true, want: `Encountered exception while executing function. Exception = ReferenceError: require is not defined`},
		{name: "no timers", src: `function () { setTimeout(function () {}, 1); }`, args: `[]`, wantErr: true, want: `Encountered exception while executing function. Exception = ReferenceError: setTimeout is not defined`},
		{name: "bounded repeat", src: `function () { "x".repeat(1e9); }`, args: `[]`, wantErr: true, want: `Encountered exception while executing function. Exception = RangeError: String.repeat would build a string longer than`},
		{name: "deep recursion", src: `function () { (function f() { f(); })(); }`, args: `[]`, wantErr: true, want: `Encountered exception while executing function. Exception = Error: Out of stack space`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newRunner(Budgets{})
			res, err := run(t, r, newMem(), tc.src, tc.args)
			if tc.wantErr {
				var se *Error
				if !errors.As(err, &se) {
					t.Fatalf("got %v (%q), want an error", err, res.Body)
				}
				if se.Status != 400 || se.SubStatus != tc.sub || !strings.HasPrefix(se.Message, tc.want) {
					t.Fatalf("got %d/%d %q\nwant 400/%d %q…", se.Status, se.SubStatus, se.Message, tc.sub, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Body) != tc.want {
				t.Fatalf("body %s, want %s", res.Body, tc.want)
			}
		})
	}
}

func TestLog(t *testing.T) {
	r, _ := newRunner(Budgets{})
	res, err := run(t, r, newMem(), `function () { console.log("a", 1, {b: 2}); console.log("c"); }`, `[]`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Log != "a 1 {\"b\":2}\nc" {
		t.Fatalf("log %q", res.Log)
	}
}

// TestTimeBudget: a script that never ends is stopped once its budget
// has passed on the runner's clock.
func TestTimeBudget(t *testing.T) {
	r, c := newRunner(Budgets{Time: 5 * time.Second})
	err := clocktest.AdvanceUntilDone(t, c, time.Second, "the script stops", func() error {
		_, err := run(t, r, newMem(), `function () { while (true) {} }`, `[]`)
		return err
	})
	var se *Error
	if !errors.As(err, &se) || se.Status != 408 {
		t.Fatalf("got %v, want 408", err)
	}
}

// TestOperationBudget: past the budget, operations are not accepted, and
// a script that checks can return what it did.
func TestOperationBudget(t *testing.T) {
	r, _ := newRunner(Budgets{Operations: 3})
	m := newMem()
	res, err := run(t, r, m, `function () {
		var c = getContext().getCollection(), n = 0;
		for (var i = 0; i < 10; i++) {
			if (!c.createDocument(c.getSelfLink(), {id: "d" + i})) break;
			n++;
		}
		getContext().getResponse().setBody(n);
	}`, `[]`)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != "3" || m.calls.Load() != 3 {
		t.Fatalf("body %s after %d creates, want 3", res.Body, m.calls.Load())
	}
}

// TestMemoryBudget: a script that allocates without bound is stopped.
func TestMemoryBudget(t *testing.T) {
	r, c := newRunner(Budgets{Memory: 64 << 20, Time: time.Hour})
	err := clocktest.AdvanceUntilDone(t, c, memoryPoll, "the script stops", func() error {
		_, err := run(t, r, newMem(), `function () { var a = []; while (true) a.push("x".repeat(1024) + a.length); }`, `[]`)
		return err
	})
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(se.Message, "memory budget") {
		t.Fatalf("got %v, want the memory budget", err)
	}
}

// TestHostFailure: an error that is not the script's fault ends the run
// with that error, and the script cannot catch it.
func TestHostFailure(t *testing.T) {
	r, _ := newRunner(Budgets{})
	boom := errors.New("disk on fire")
	_, err := run(t, r, failing{newMem(), boom}, `function () {
		try { getContext().getCollection().readDocument("dbs/db/colls/c/docs/a"); } catch (e) {}
		getContext().getResponse().setBody("swallowed");
	}`, `[]`)
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
}

type failing struct {
	*memCollection
	err error
}

func (f failing) Read(string, string) ([]byte, error) { return nil, f.err }

func TestCompile(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"function () {}", ""},
		{"function named(a, b) { return a + b; }", ""},
		{"(x) => x * 2", ""},
		{"async function () {}", ""},
		{"/* a\n b */ function () {};\n// end", ""},
		{"function () {\n  var x = ;\n}", "Unexpected token ; (line 2, column 11)"},
		{"function ( {", "(at the end of the body)"},
		{"var x = 1; function f() {}", "Unexpected token var (line 1, column 1)"},
		{"function () {}) + (function () {}", "Unexpected token )"},
		{"function () {}; while (true) {}", "the body must be one JavaScript function"},
		{"42", "the body must be one JavaScript function"},
		{"", "Unexpected token"},
	} {
		err := Compile("s", tc.src)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Compile(%q): %v", tc.src, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Compile(%q): %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestRuntimeReuse: a runtime serves later calls of the same script
// (what a call leaves in its globals stays), never another script's, and
// one whose call failed is not reused.
func TestRuntimeReuse(t *testing.T) {
	r, _ := newRunner(Budgets{})
	count := `function (fail) { globalThis.calls = (globalThis.calls || 0) + 1; getContext().getResponse().setBody(calls); if (fail) throw new Error("x"); }`
	call := func(id, args string) string {
		t.Helper()
		res, err := r.Run(nil, Call{Kind: "stored procedure", ID: id, Version: "1", Source: count, Args: []byte(args), Collection: newMem()})
		if err != nil {
			return "error"
		}
		return string(res.Body)
	}
	got := []string{call("a", "[false]"), call("a", "[false]"), call("b", "[false]"), call("a", "[true]"), call("a", "[false]")}
	if want := []string{"1", "2", "1", "error", "1"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %q, want %q", got, want)
	}
}
