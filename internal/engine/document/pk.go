package document

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/keys"
)

// HashV1 reports whether def is a Hash key of version 1, whose EPKs are
// not spread evenly over the key space (see EPK).
func (def PKDef) HashV1() bool { return def.Kind != "MultiHash" && def.version == 1 }

// PKDef is a container's partition key definition.
type PKDef struct {
	// Paths are the key Paths split into property names: "/a/b" is
	// ["a","b"]. One path for Hash, one to three for MultiHash.
	Paths   [][]string
	Kind    string
	version int
}

// Version is the definition's hash version, 1 or 2; a body without one
// gets the service's default (1 for Hash, 2 for MultiHash).
func (def PKDef) Version() int { return def.version }

// Equal reports whether def and o are the same definition: kind, paths
// and version.
func (def PKDef) Equal(o PKDef) bool {
	return def.Kind == o.Kind && def.version == o.version && slices.EqualFunc(def.Paths, o.Paths, slices.Equal[[]string])
}

// pkComponent kinds, in the order their encodings sort.
const (
	PKNone   byte = 0x01 // the item lacks the path (JS's {} / "None")
	PKNull   byte = 0x02
	PKFalse  byte = 0x03
	PKTrue   byte = 0x04
	PKNumber byte = 0x05
	PKString byte = 0x06
)

// PKComponent is one value of a partition key.
type PKComponent struct {
	Kind byte
	Num  float64
	Str  string
}

// PartitionKey is a whole (or, for queries on hierarchical keys, leading
// part of a) partition key value.
type PartitionKey []PKComponent

// ParsePKDef reads the PartitionKey property of a container body. raw is
// nil when the property is absent.
func ParsePKDef(raw []byte) (PKDef, error) {
	var in struct {
		Paths   []string `json:"paths"`
		Kind    string   `json:"kind"`
		Version int      `json:"version"`
	}
	if raw == nil {
		return PKDef{}, dberr.BadRequest("The partition key definition is missing. Provide PartitionKey with at least one path, e.g. {\"paths\":[\"/pk\"],\"kind\":\"Hash\"}.")
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return PKDef{}, dberr.BadRequest("The partition key definition is invalid: %v.", err)
	}
	if len(in.Paths) == 0 || len(in.Paths) > 3 {
		return PKDef{}, dberr.BadRequest("A partition key definition must have between 1 and 3 paths; it has %d.", len(in.Paths))
	}
	switch in.Kind {
	case "":
		in.Kind = "Hash"
		if len(in.Paths) > 1 {
			in.Kind = "MultiHash"
		}
	case "Hash":
		if len(in.Paths) != 1 {
			return PKDef{}, dberr.BadRequest("A partition key of kind Hash has exactly one path; use kind MultiHash for %d paths.", len(in.Paths))
		}
	case "MultiHash":
	case "Range":
		return PKDef{}, dberr.BadRequest("Partition key kind 'Range' is not supported; use Hash or MultiHash.")
	default:
		return PKDef{}, dberr.BadRequest("Partition key kind '%s' is invalid; use Hash or MultiHash.", in.Kind)
	}
	if in.Version == 0 {
		in.Version = 1
		if in.Kind == "MultiHash" {
			in.Version = 2
		}
	}
	if in.Version != 1 && in.Version != 2 {
		return PKDef{}, dberr.BadRequest("Partition key version %d is invalid; use 1 or 2.", in.Version)
	}
	def := PKDef{Kind: in.Kind, version: in.Version}
	for _, p := range in.Paths {
		segs, ok := SplitPath(p)
		if !ok {
			return PKDef{}, dberr.BadRequest("The partition key path '%s' is invalid. A path starts with '/' and names a property, e.g. '/tenantId'.", p)
		}
		def.Paths = append(def.Paths, segs)
	}
	return def, nil
}

// SplitPath splits "/a/b" into ["a","b"]; a segment may be quoted.
func SplitPath(p string) ([]string, bool) {
	if len(p) < 2 || p[0] != '/' || strings.HasSuffix(p, "/") {
		return nil, false
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if s == "" || s == "*" || s == "?" {
			return nil, false
		}
		if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
			segs[i] = s[1 : len(s)-1]
		}
	}
	return segs, true
}

// FromDocument extracts the partition key of a document.
// REQUIRES: ms are the top-level members of a valid JSON object.
func (d PKDef) FromDocument(doc []byte, ms []Member) (PartitionKey, error) {
	pk := make(PartitionKey, 0, len(d.Paths))
	for _, path := range d.Paths {
		var raw []byte
		cur := ms
		for i, seg := range path {
			raw = Lookup(cur, seg)
			if raw == nil || i == len(path)-1 {
				break
			}
			next, ok := ObjectMembers(raw)
			if !ok {
				raw = nil
				break
			}
			cur = next
		}
		c, err := componentFromJSON(raw, false)
		if err != nil {
			return nil, err
		}
		pk = append(pk, c)
	}
	return pk, nil
}

// componentFromJSON reads one partition key value. raw is nil when the
// document lacks the path.
//
// In a header, {} stands for that "None" value: it is the JS SDK's
// NonePartitionKeyLiteral (documents/PartitionKeyInternal.js), which its
// PartitionKeyBuilder.addNoneValue() puts in a hierarchical key. Any other
// object or array in a header is an error.
//
// In a document, an object or an array at the path is the None value as
// well: the service extracts a document's key leniently, turning a value
// that is not a primitive into Undefined (DocumentAnalyzer.
// ExtractPartitionKeyValue calls PartitionKeyInternal.FromObjectArray with
// strict false, in azure-cosmos-dotnet-v3), and the JS SDK sends {} for a
// document whose path holds {} (extractPartitionKey.js), so the two agree.
func componentFromJSON(raw []byte, header bool) (PKComponent, error) {
	if raw == nil {
		return PKComponent{Kind: PKNone}, nil
	}
	if !header && (raw[0] == '{' || raw[0] == '[') {
		return PKComponent{Kind: PKNone}, nil
	}
	switch raw[0] {
	case '"':
		return PKComponent{Kind: PKString, Str: Unquote(raw)}, nil
	case 't':
		return PKComponent{Kind: PKTrue}, nil
	case 'f':
		return PKComponent{Kind: PKFalse}, nil
	case 'n':
		return PKComponent{Kind: PKNull}, nil
	case '{':
		if ms, ok := ObjectMembers(raw); header && ok && len(ms) == 0 {
			return PKComponent{Kind: PKNone}, nil
		}
	case '[':
	default:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(f, 0) {
			return PKComponent{}, dberr.BadRequest("The partition key value %s is not a valid number.", raw)
		}
		if f == 0 {
			f = 0 // fold -0 into 0
		}
		return PKComponent{Kind: PKNumber, Num: f}, nil
	}
	return PKComponent{}, dberr.BadRequest("A partition key value must be a string, a number, true, false or null; found %s.", Truncate(raw, 64))
}

// ParsePKHeader parses x-ms-documentdb-partitionkey, a JSON array of
// values. An empty array means "no value given".
func ParsePKHeader(h string) (PartitionKey, error) {
	if !utf8.ValidString(h) {
		return nil, dberr.BadRequest("The partition key header is not valid UTF-8.")
	}
	// Nearly every request carries one plain string: ["value"].
	if n := len(h); n >= 4 && h[0] == '[' && h[1] == '"' && h[n-2] == '"' && h[n-1] == ']' {
		if v := h[2 : n-2]; strings.IndexFunc(v, func(r rune) bool { return r == '"' || r == '\\' || r < 0x20 }) < 0 {
			return PartitionKey{{Kind: PKString, Str: v}}, nil
		}
	}
	raw := []byte(h)
	if !json.Valid(raw) {
		return nil, dberr.BadRequest("The partition key header %q is not valid JSON; send a JSON array such as [\"value\"].", Truncate(raw, 64))
	}
	i := SkipSpace(raw, 0)
	if raw[i] != '[' {
		return nil, dberr.BadRequest("The partition key header %q must be a JSON array such as [\"value\"].", Truncate(raw, 64))
	}
	var pk PartitionKey
	i = SkipSpace(raw, i+1)
	for i < len(raw) && raw[i] != ']' {
		end := SkipValue(raw, i)
		c, err := componentFromJSON(raw[i:end], true)
		if err != nil {
			return nil, err
		}
		pk = append(pk, c)
		i = SkipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = SkipSpace(raw, i+1)
		}
	}
	if len(pk) > 3 {
		return nil, dberr.BadRequest("The partition key header has %d values; at most 3 are allowed.", len(pk))
	}
	return pk, nil
}

// Encode appends the order-preserving key encoding of pk.
func (pk PartitionKey) Encode(dst []byte) []byte {
	for _, c := range pk {
		dst = append(dst, c.Kind)
		switch c.Kind {
		case PKNumber:
			bits := math.Float64bits(c.Num)
			if bits&(1<<63) != 0 {
				bits = ^bits
			} else {
				bits |= 1 << 63
			}
			dst = keys.AppendUint64(dst, bits)
		case PKString:
			dst = keys.AppendString(dst, c.Str)
		}
	}
	return dst
}

// PKLen returns the length of the n encoded partition-key components at
// the front of key, without decoding them.
func PKLen(key []byte, n int) (int, bool) {
	i := 0
	for ; n > 0; n-- {
		if i >= len(key) {
			return 0, false
		}
		kind := key[i]
		i++
		switch kind {
		case PKNone, PKNull, PKFalse, PKTrue:
		case PKNumber:
			i += 8
		case PKString:
			// keys.AppendBytes: 0x00 0xFF escapes a NUL, 0x00 0x01 ends.
			for {
				j := bytes.IndexByte(key[i:], 0)
				if j < 0 || i+j+1 >= len(key) {
					return 0, false
				}
				i += j + 2
				if key[i-1] == 0x01 {
					break
				}
			}
		default:
			return 0, false
		}
	}
	return i, i <= len(key)
}

// decodePKNumber decodes a number component's value, after its kind.
func decodePKNumber(key []byte) (PKComponent, []byte, error) {
	bits, rest, err := keys.DecodeUint64(key)
	if err != nil {
		return PKComponent{}, nil, err
	}
	if bits&(1<<63) != 0 {
		bits &^= 1 << 63
	} else {
		bits = ^bits
	}
	return PKComponent{Kind: PKNumber, Num: math.Float64frombits(bits)}, rest, nil
}

// DecodePK splits n encoded components off the front of key.
func DecodePK(key []byte, n int) (PartitionKey, []byte, error) {
	pk := make(PartitionKey, 0, n)
	for i := 0; i < n; i++ {
		if len(key) == 0 {
			return nil, nil, keys.ErrMalformed
		}
		c := PKComponent{Kind: key[0]}
		key = key[1:]
		switch c.Kind {
		case PKNone, PKNull, PKFalse, PKTrue:
		case PKNumber:
			var err error
			if c, key, err = decodePKNumber(key); err != nil {
				return nil, nil, err
			}
		case PKString:
			s, rest, err := keys.DecodeBytes(key)
			if err != nil {
				return nil, nil, err
			}
			c.Str, key = string(s), rest
		default:
			return nil, nil, keys.ErrMalformed
		}
		pk = append(pk, c)
	}
	return pk, key, nil
}

func (pk PartitionKey) Equal(o PartitionKey) bool {
	if len(pk) != len(o) {
		return false
	}
	for i := range pk {
		if pk[i] != o[i] {
			return false
		}
	}
	return true
}

// AppendJSON appends pk as the JSON array the SDKs use.
func (pk PartitionKey) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	for i, c := range pk {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch c.Kind {
		case PKNone:
			dst = append(dst, "{}"...)
		case PKNull:
			dst = append(dst, "null"...)
		case PKFalse:
			dst = append(dst, "false"...)
		case PKTrue:
			dst = append(dst, "true"...)
		case PKNumber:
			dst = strconv.AppendFloat(dst, c.Num, 'g', -1, 64)
		case PKString:
			dst = AppendQuoted(dst, c.Str)
		}
	}
	return append(dst, ']')
}

func Truncate(b []byte, n int) string {
	if len(b) > n {
		return string(bytes.ToValidUTF8(b[:n], nil)) + "…"
	}
	return string(b)
}
