package query

import (
	"io"
	"sync"
	"unsafe"
)

// Body holds the rows of a page as the contents of a JSON array: each
// row's compact JSON, separated by commas. A row is written into it once,
// as the executor produces it, into chunks of chunkSize bytes taken from
// a pool, and a server sends the chunks as they are (WriteTo) with
// Size as the length: neither the rows nor the response are copied again.
// Release gives the chunks back for the next page.
//
// A Body is not safe for concurrent use. Rows and the bytes WriteTo
// writes are valid until Release.
type Body struct {
	// parts are the chunks' contents in order, commas included; rows
	// appends to the last one.
	parts [][]byte
	// pooled are the chunks to give back on Release: those of parts that
	// came from chunkPool (a row too large for a chunk, or one that grew
	// out of its chunk while it was encoded, gets a buffer of its own).
	pooled []*chunk
	// rows are the rows, each a slice of one part, without its comma.
	rows [][]byte
	size int // bytes of parts
}

// chunkSize is the size of the chunks rows are written into; a row that
// is larger gets a buffer of its own size.
const chunkSize = 64 << 10

// encodeReserve is the room a row encoded from a value (whose size is
// not known in advance) is given in its chunk; a larger one moves to a
// buffer of its own as it grows.
const encodeReserve = 4 << 10

type chunk [chunkSize]byte

// chunkPool holds chunks as array pointers, which go in and out of a
// sync.Pool without an allocation.
var chunkPool = sync.Pool{New: func() any { return new(chunk) }}

var bodyPool = sync.Pool{New: func() any { return new(Body) }}

// maxPooledRows bounds the row list a pooled Body keeps for the next
// page, so a page of millions of tiny rows does not pin its list.
const maxPooledRows = 64 << 10

func newBody() *Body { return bodyPool.Get().(*Body) }

// Len returns the number of rows (none in a nil Body).
func (b *Body) Len() int {
	if b == nil {
		return 0
	}
	return len(b.rows)
}

// Size returns the size of the rows joined by commas: what WriteTo
// writes, the length of the JSON array less its brackets.
func (b *Body) Size() int {
	if b == nil {
		return 0
	}
	return b.size
}

// Rows returns the rows, each its compact JSON (an empty list, not nil,
// when there are none, or the Body is nil). They are valid until
// Release.
func (b *Body) Rows() [][]byte {
	if b == nil || len(b.rows) == 0 {
		return [][]byte{}
	}
	return b.rows
}

// WriteTo writes the rows joined by commas to w, one Write per chunk.
func (b *Body) WriteTo(w io.Writer) (int64, error) {
	if b == nil {
		return 0, nil
	}
	var n int64
	for _, p := range b.parts {
		if len(p) == 0 {
			continue
		}
		m, err := w.Write(p)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Release gives the body's chunks back to the pool. Nothing of it (rows
// included) may be used afterwards. A nil Body is a no-op.
func (b *Body) Release() {
	if b == nil {
		return
	}
	for _, c := range b.pooled {
		chunkPool.Put(c)
	}
	clear(b.pooled)
	clear(b.parts)
	b.pooled, b.parts = b.pooled[:0], b.parts[:0]
	if cap(b.rows) > maxPooledRows {
		b.rows = nil
	} else {
		clear(b.rows)
		b.rows = b.rows[:0]
	}
	b.size = 0
	bodyPool.Put(b)
}

// begin returns the buffer the next row is to be appended to, with at
// least n bytes free after the comma that separates it from the row
// before, which begin has written; the row starts at len(buf). end
// records the row.
func (b *Body) begin(n int) []byte {
	if len(b.rows) > 0 {
		n++
	}
	var buf []byte
	if len(b.parts) > 0 {
		buf = b.parts[len(b.parts)-1]
	}
	if cap(buf)-len(buf) < n {
		if n > chunkSize {
			buf = make([]byte, 0, n)
		} else {
			c := chunkPool.Get().(*chunk)
			b.pooled = append(b.pooled, c)
			buf = c[:0:chunkSize]
		}
		b.parts = append(b.parts, buf)
	}
	if len(b.rows) > 0 {
		buf = append(buf, ',')
	}
	return buf
}

// end records the row that begin's buffer holds from start on, buf
// being that buffer with the row appended. If the row outgrew the
// buffer, append moved buf (with the rows before it, which stay where
// they were): the old buffer keeps what it had before the row, and the
// new one holds the row and takes the rows after it.
func (b *Body) end(buf []byte, start int) {
	last := len(b.parts) - 1
	if unsafe.SliceData(buf) == unsafe.SliceData(b.parts[last]) {
		b.size += len(buf) - len(b.parts[last])
		b.parts[last] = buf
	} else {
		b.size += start - len(b.parts[last])
		b.parts[last] = b.parts[last][:start]
		buf = buf[start:]
		start = 0
		b.parts = append(b.parts, buf)
		b.size += len(buf)
	}
	b.rows = append(b.rows, buf[start:len(buf):len(buf)])
}

// appendRaw adds a row whose bytes are known.
func (b *Body) appendRaw(row []byte) {
	buf := b.begin(len(row))
	start := len(buf)
	b.end(append(buf, row...), start)
}

// appendValue adds a row encoded from v.
func (b *Body) appendValue(v Value) {
	buf := b.begin(encodeReserve)
	start := len(buf)
	b.end(v.AppendJSON(buf), start)
}
