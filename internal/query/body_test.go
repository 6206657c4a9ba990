package query

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/race"
)

// TestBody writes rows of every size a page meets (small, filling a
// chunk, outgrowing the room an encoded row is given, larger than a
// chunk) as raw bytes and as values, and checks that the rows, Size and
// WriteTo agree with the rows joined by commas, then again on a body
// that was released and taken back from the pool.
func TestBody(t *testing.T) {
	str := func(n int) Value { return StringValue(strings.Repeat("s", n)) }
	raw := func(n int) []byte { return []byte(strconv.Quote(strings.Repeat("r", n))) }
	tests := []struct {
		name string
		rows []any // []byte (raw) or Value
	}{
		{"none", nil},
		{"one", []any{raw(3)}},
		{"small", []any{raw(1), NumberValue(2), str(3), raw(4)}},
		{"fill chunks", repeatRows(200, func(i int) any { return raw(1000) })},
		{"values fill chunks", repeatRows(200, func(i int) any { return str(1000) })},
		{"value outgrows its room", []any{raw(10), str(encodeReserve * 3), raw(10), str(10)}},
		{"value outgrows a chunk", []any{str(10), str(chunkSize + 10), str(10)}},
		{"raw larger than a chunk", []any{raw(10), raw(chunkSize * 2), raw(10)}},
		{"alternating", repeatRows(300, func(i int) any {
			if i%7 == 0 {
				return str(i * 50)
			}
			return raw(i * 30)
		})},
	}
	for _, tt := range tests {
		for round := range 2 {
			b := newBody()
			var want [][]byte
			for _, r := range tt.rows {
				switch r := r.(type) {
				case []byte:
					b.appendRaw(r)
					want = append(want, r)
				case Value:
					b.appendValue(r)
					want = append(want, r.AppendJSON(nil))
				}
			}
			joined := bytes.Join(want, []byte(","))
			if b.Len() != len(want) {
				t.Fatalf("%s (round %d): Len %d, want %d", tt.name, round, b.Len(), len(want))
			}
			for i, r := range b.Rows() {
				if !bytes.Equal(r, want[i]) {
					t.Fatalf("%s (round %d): row %d is %.40q… (%d bytes), want %.40q… (%d bytes)", tt.name, round, i, r, len(r), want[i], len(want[i]))
				}
			}
			var out bytes.Buffer
			n, err := b.WriteTo(&out)
			if err != nil || n != int64(out.Len()) {
				t.Fatalf("%s (round %d): WriteTo %d, %v; wrote %d", tt.name, round, n, err, out.Len())
			}
			if b.Size() != len(joined) || !bytes.Equal(out.Bytes(), joined) {
				t.Fatalf("%s (round %d): Size %d, wrote %d bytes; want the %d bytes of the rows joined by commas", tt.name, round, b.Size(), out.Len(), len(joined))
			}
			b.Release()
		}
	}
}

func repeatRows(n int, row func(i int) any) []any {
	rows := make([]any, n)
	for i := range rows {
		rows[i] = row(i)
	}
	return rows
}

// TestBodyReuse checks that a page's rows are written into chunks a
// released body gave back: a page after the first allocates no chunk.
func TestBodyReuse(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop chunks")
	}
	row := []byte(`"` + strings.Repeat("x", 1000) + `"`)
	fill := func() {
		b := newBody()
		for range 200 {
			b.appendRaw(row)
		}
		b.Release()
	}
	fill()
	if allocs := testing.AllocsPerRun(20, fill); allocs > 0 {
		t.Errorf("a page of 200 rows into a released body allocated %v times, want 0", allocs)
	}
}
