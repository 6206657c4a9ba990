package document

import (
	"encoding/binary"
	"fmt"

	"github.com/ebbdb/ebb/internal/ttl"
)

// ItemHeader precedes each stored document: what the engine needs to
// decide visibility and etags without parsing the JSON.
type ItemHeader struct {
	Ts  int64
	TTL ttl.ItemTTL
	LSN uint64
	Seq uint64
}

const (
	headerVersion = 1
	HeaderLen     = 1 + 8 + 4 + 8 + 8
)

func (h ItemHeader) Append(dst []byte) []byte {
	dst = append(dst, headerVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.Ts))
	dst = binary.BigEndian.AppendUint32(dst, uint32(int32(h.TTL)))
	dst = binary.BigEndian.AppendUint64(dst, h.LSN)
	return binary.BigEndian.AppendUint64(dst, h.Seq)
}

// DecodeItem splits a stored value into its header and document JSON.
func DecodeItem(v []byte) (ItemHeader, []byte, error) {
	if len(v) < HeaderLen || v[0] != headerVersion {
		return ItemHeader{}, nil, fmt.Errorf("document: corrupt item value (%d bytes)", len(v))
	}
	return ItemHeader{
		Ts:  int64(binary.BigEndian.Uint64(v[1:])),
		TTL: ttl.ItemTTL(int32(binary.BigEndian.Uint32(v[9:]))),
		LSN: binary.BigEndian.Uint64(v[13:]),
		Seq: binary.BigEndian.Uint64(v[21:]),
	}, v[HeaderLen:], nil
}
