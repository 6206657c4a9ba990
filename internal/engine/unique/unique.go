// Package unique owns unique keys: the container's uniqueKeyPolicy, and
// the storage entries that enforce it. An entry is keyed by the unique
// key's number, the logical partition and the item's values at the key's
// paths, and holds the id of the item that has them, so the check of a
// write costs one point read per unique key and no scan.
//
// As the service defines them (https://learn.microsoft.com/azure/cosmos-db/unique-keys):
// a unique key is unique within a logical partition; it names up to 16
// paths, whose values together must be unique; a container may have
// several; a missing path counts as null, so at most one item per
// partition may lack it (sparse unique keys are not supported); and the
// policy is fixed when the container is created.
package unique

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
)

// MaxPaths is how many paths one unique key may name, and MaxKeys how
// many unique keys a container may have.
const (
	MaxPaths = 16
	MaxKeys  = 10
)

// Policy is a container's unique keys: each a list of paths, each path
// its property names from the root.
type Policy struct {
	Keys [][][]string
}

// None reports whether the policy has no unique key.
func (p Policy) None() bool { return len(p.Keys) == 0 }

// Equal reports whether two policies name the same keys and paths in the
// same order.
func (p Policy) Equal(o Policy) bool {
	return slices.EqualFunc(p.Keys, o.Keys, func(a, b [][]string) bool {
		return slices.EqualFunc(a, b, slices.Equal[[]string])
	})
}

// ParsePolicy validates a container's uniqueKeyPolicy (nil or null: none).
func ParsePolicy(raw []byte) (Policy, error) {
	var p Policy
	if raw == nil || string(raw) == "null" {
		return p, nil
	}
	var body struct {
		UniqueKeys []struct {
			Paths []string `json:"paths"`
		} `json:"uniqueKeys"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return p, dberr.BadRequest("The uniqueKeyPolicy must be an object of the form {\"uniqueKeys\": [{\"paths\": [\"/a\", ...]}, ...]}: %s.", strings.TrimPrefix(err.Error(), "json: "))
	}
	if len(body.UniqueKeys) > MaxKeys {
		return p, dberr.BadRequest("The uniqueKeyPolicy has %d unique keys; a container can have at most %d.", len(body.UniqueKeys), MaxKeys)
	}
	for i, k := range body.UniqueKeys {
		if len(k.Paths) == 0 || len(k.Paths) > MaxPaths {
			return p, dberr.BadRequest("Unique key %d of the uniqueKeyPolicy has %d paths; a unique key needs between 1 and %d.", i+1, len(k.Paths), MaxPaths)
		}
		key := make([][]string, 0, len(k.Paths))
		seen := map[string]bool{}
		for _, path := range k.Paths {
			segs, ok := document.SplitPath(path)
			if !ok || strings.Contains(path, "[]") {
				return p, dberr.BadRequest("The unique key path '%s' is not valid: a unique key path names a property from the root, such as /email or /address/zipCode, without wildcards.", path)
			}
			if seen[path] {
				return p, dberr.BadRequest("The unique key path '%s' appears twice in unique key %d.", path, i+1)
			}
			seen[path] = true
			key = append(key, segs)
		}
		p.Keys = append(p.Keys, key)
	}
	return p, nil
}

// ErrViolation is the service's answer to a write whose values are
// already held: 409 Conflict. The message is the one the service's
// backend gives for a unique index violation (see
// https://github.com/Azure/azure-cosmos-dotnet-v2/issues/523).
var ErrViolation = &dberr.Error{Kind: dberr.KindConflict, Message: "Unique index constraint violation."}

// maxInline is the longest value encoding an entry key holds as it is;
// a longer one is replaced by its SHA-256, so keys stay short enough for
// every backend's index whatever the documents hold.
const maxInline = 512

// Entries appends to dst the entry key of each of p's unique keys for
// doc, an item of container rid in the logical partition pkEnc.
func Entries(dst [][]byte, p Policy, rid [8]byte, pkEnc, doc []byte) [][]byte {
	var vals []byte
	for n, key := range p.Keys {
		vals = vals[:0]
		for _, path := range key {
			vals = appendCanonical(vals, valueAt(doc, path))
		}
		enc := append([]byte{0}, vals...)
		if len(enc) > maxInline {
			sum := sha256.Sum256(vals)
			enc = append([]byte{1}, sum[:]...)
		}
		dst = append(dst, keyspace.UniqueKey(rid, n, pkEnc, enc))
	}
	return dst
}

// valueAt returns the raw JSON value at path in doc, nil if there is none.
func valueAt(doc []byte, path []string) []byte {
	for _, name := range path {
		if doc = document.MemberValue(doc, name); doc == nil {
			return nil
		}
	}
	return doc
}

// Tags of the canonical encoding; scalars use the partition-key
// encoding's tags.
const (
	tagArray  = 0x20
	tagObject = 0x21
	tagEnd    = 0x00
)

// appendCanonical appends an encoding of the JSON value raw under which
// two values are equal exactly when they are equal JSON values: numbers
// by value (1 and 1.0 alike), strings unescaped, objects by their members
// whatever their order. A missing value (nil) is null, as the service
// treats a missing unique key path.
func appendCanonical(dst, raw []byte) []byte {
	if raw == nil {
		return append(dst, document.PKNull)
	}
	switch raw[0] {
	case '"':
		return document.PartitionKey{{Kind: document.PKString, Str: document.Unquote(raw)}}.Encode(dst)
	case 't':
		return append(dst, document.PKTrue)
	case 'f':
		return append(dst, document.PKFalse)
	case 'n':
		return append(dst, document.PKNull)
	case '[':
		dst = append(dst, tagArray)
		for i := document.SkipSpace(raw, 1); i < len(raw) && raw[i] != ']'; {
			end := document.SkipValue(raw, i)
			dst = appendCanonical(dst, raw[i:end])
			i = document.SkipSpace(raw, end)
			if i < len(raw) && raw[i] == ',' {
				i = document.SkipSpace(raw, i+1)
			}
		}
		return append(dst, tagEnd)
	case '{':
		ms, _ := document.ObjectMembers(raw)
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].Key < ms[j].Key })
		dst = append(dst, tagObject)
		for _, m := range ms {
			dst = document.PartitionKey{{Kind: document.PKString, Str: m.Key}}.Encode(dst)
			dst = appendCanonical(dst, m.Val)
		}
		return append(dst, tagEnd)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) {
		// Not a float64: keep its text, which is then its identity.
		return document.PartitionKey{{Kind: document.PKString, Str: string(raw)}}.Encode(append(dst, document.PKNumber))
	}
	if f == 0 {
		f = 0 // -0 is 0
	}
	return document.PartitionKey{{Kind: document.PKNumber, Num: f}}.Encode(dst)
}
