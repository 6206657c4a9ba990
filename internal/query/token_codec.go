package query

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Continuation tokens. Layout:
//
//	version (1 byte) | mode (1 byte) | plan hash (8 bytes, big-endian) |
//	mode-specific payload | CRC-32 (IEEE) of all preceding bytes (4 bytes)
//
// The plan hash covers the query text and the bound parameter values, so a
// token presented with another query or other parameters is rejected; the
// CRC rejects truncated or altered tokens. The engine base64-encodes the
// bytes into a header.

// Version 2 resumes a document inside its FROM/JOIN loops by position
// where version 1 counted the rows it had returned; version 1 tokens are
// refused.
const tokenVersion = 2

// cursor is the resume state of a query, decoded from a token.
type cursor struct {
	// Rows still to skip for OFFSET, and rows returned so far (for TOP and
	// LIMIT). Both carry across pages.
	skipLeft int
	emitted  int

	// modeStream: resume scanning strictly after afterKey (from the start
	// if !hasAfter). If hasPartial, the document at partialKey resumes at
	// the FROM/JOIN combination partialPos (an index per FROM source), the
	// first that has not produced its row.
	hasAfter   bool
	afterKey   []byte
	hasPartial bool
	partialKey []byte
	partialPos []int

	// modeOrderBy: the position of the last row returned; the next page
	// takes only rows strictly after it. from, if set, is where an
	// OrderedSource is read from instead of last.key: the document a page
	// cut short by its budget was evaluating, every run before whose run
	// the page has read to its end.
	hasLast bool
	last    position
	from    []byte

	// modeMaterialized, modeNoFrom: index of the next row of the result.
	offset int
}

func (p *Plan) encodeCursor(cur *cursor) []byte {
	b := make([]byte, 0, 64)
	b = append(b, tokenVersion, byte(p.mode))
	b = binary.BigEndian.AppendUint64(b, p.hash)
	b = binary.AppendUvarint(b, uint64(cur.skipLeft))
	b = binary.AppendUvarint(b, uint64(cur.emitted))
	switch p.mode {
	case modeStream:
		var flags byte
		if cur.hasAfter {
			flags |= 1
		}
		if cur.hasPartial {
			flags |= 2
		}
		b = append(b, flags)
		b = appendBytes(b, cur.afterKey)
		b = appendBytes(b, cur.partialKey)
		b = binary.AppendUvarint(b, uint64(len(cur.partialPos)))
		for _, i := range cur.partialPos {
			b = binary.AppendUvarint(b, uint64(i))
		}
	case modeOrderBy:
		if !cur.hasLast {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			b = binary.AppendUvarint(b, uint64(len(cur.last.keys)))
			for _, k := range cur.last.keys {
				if k.kind == Undefined {
					b = appendBytes(b, nil)
				} else {
					b = appendBytes(b, k.AppendJSON(nil))
				}
			}
			b = appendBytes(b, cur.last.key)
			b = binary.AppendUvarint(b, uint64(cur.last.idx))
		}
		b = appendBytes(b, cur.from)
	default:
		b = binary.AppendUvarint(b, uint64(cur.offset))
	}
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

func appendBytes(b, x []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(x)))
	return append(b, x...)
}

func badToken(why string) error { return fmt.Errorf("%w: %s", ErrBadContinuation, why) }

// tokenReader reads the payload; the first error sticks.
type tokenReader struct {
	b   []byte
	err error
}

func (r *tokenReader) uvarint() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > 1<<40 {
		r.err = badToken("malformed number")
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *tokenReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = badToken("truncated")
		return nil
	}
	x := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return x
}

func (r *tokenReader) byte1() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = badToken("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// decodeCursor checks and decodes a token; nil gives the start state.
func (p *Plan) decodeCursor(tok []byte) (*cursor, error) {
	cur := &cursor{skipLeft: p.skip}
	if tok == nil {
		return cur, nil
	}
	if len(tok) < 14 {
		return nil, badToken("too short")
	}
	body, sum := tok[:len(tok)-4], binary.BigEndian.Uint32(tok[len(tok)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, badToken("checksum mismatch")
	}
	if body[0] != tokenVersion {
		return nil, badToken(fmt.Sprintf("unknown version %d", body[0]))
	}
	if execMode(body[1]) != p.mode || binary.BigEndian.Uint64(body[2:10]) != p.hash {
		return nil, badToken("token belongs to another query or parameter set")
	}
	r := &tokenReader{b: body[10:]}
	cur.skipLeft = r.uvarint()
	cur.emitted = r.uvarint()
	switch p.mode {
	case modeStream:
		flags := r.byte1()
		cur.hasAfter = flags&1 != 0
		cur.hasPartial = flags&2 != 0
		cur.afterKey = r.bytes()
		cur.partialKey = r.bytes()
		n := r.uvarint()
		if r.err == nil && n != 0 && n != len(p.q.stmt.From) {
			return nil, badToken("wrong number of FROM sources")
		}
		if n > 0 {
			cur.partialPos = make([]int, n)
			for i := range cur.partialPos {
				cur.partialPos[i] = r.uvarint()
			}
		}
		if cur.hasPartial && len(cur.partialPos) == 0 {
			return nil, badToken("partial document without a position")
		}
	case modeOrderBy:
		if r.byte1() == 1 {
			cur.hasLast = true
			n := r.uvarint()
			if n != len(p.q.stmt.OrderBy) {
				return nil, badToken("wrong number of sort keys")
			}
			cur.last.keys = make([]Value, n)
			for i := range cur.last.keys {
				raw := r.bytes()
				if r.err != nil {
					break
				}
				if len(raw) > 0 {
					v, err := ParseJSON(raw)
					if err != nil {
						return nil, badToken("malformed sort key")
					}
					cur.last.keys[i] = v
				}
			}
			cur.last.key = r.bytes()
			cur.last.idx = r.uvarint()
		}
		cur.from = r.bytes()
	default:
		cur.offset = r.uvarint()
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, badToken("trailing bytes")
	}
	return cur, nil
}
