package query

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// doubler is a UDFs with udf.double(x) = 2x and udf.fail(), which fails.
type doubler struct{ calls int }

var errUDF = errors.New("udf failed")

func (d *doubler) Call(name string, args []Value) (Value, error) {
	d.calls++
	switch name {
	case "double":
		n, ok := args[0].AsNumber()
		if !ok {
			return UndefinedValue(), nil
		}
		return NumberValue(2 * n), nil
	case "fail":
		return UndefinedValue(), errUDF
	}
	return UndefinedValue(), errors.New("no such function")
}

func TestUDFs(t *testing.T) {
	src := docs(`{"id":"a","n":1}`, `{"id":"b","n":2}`, `{"id":"c","n":"x"}`)
	run := func(text string, u UDFs) ([]string, error) { return queryRows(t, src, text, Env{UDFs: u}) }
	q, _ := Parse("SELECT udf.double(c.n) AS d FROM c WHERE udf.double(c.n) > 2 OR udf.double(1) = 0")
	if got := strings.Join(q.UDFs(), ","); got != "double" {
		t.Fatalf("UDFs() = %q", got)
	}
	d := &doubler{}
	rows, err := run("SELECT c.id, udf.double(c.n) AS d FROM c WHERE udf.double(c.n) > 2", d)
	if err != nil || strings.Join(rows, ";") != `{"id":"b","d":4}` {
		t.Fatalf("got %q, %v", rows, err)
	}
	// A function whose result is undefined leaves the property out.
	rows, _ = run("SELECT VALUE {d: udf.double(c.n)} FROM c", d)
	if strings.Join(rows, ";") != `{"d":2};{"d":4};{}` {
		t.Fatalf("got %q", rows)
	}
	if _, err := run("SELECT VALUE udf.fail() FROM c", d); !errors.Is(err, errUDF) {
		t.Fatalf("a failing function: %v", err)
	}
	if _, err := ParseFilter("FROM c WHERE udf.double(c.n) > 1"); err == nil || !strings.Contains(err.Error(), "a patch condition cannot call a user-defined function (udf.double)") {
		t.Fatalf("a patch condition calling a udf: %v", err)
	}
}

// queryRows runs a query over src in env to its first page and returns
// the rows as JSON text.
func queryRows(t *testing.T, src Source, text string, env Env) ([]string, error) {
	t.Helper()
	q, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	p, err := q.Bind(nil)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := p.Page(context.Background(), src, PageRequest{Env: env})
	if err != nil {
		return nil, err
	}
	var rows []string
	for _, r := range pg.Rows() {
		rows = append(rows, string(r))
	}
	return rows, nil
}
