// Package vector owns vector search's container policies as the service
// validates them: the vectorEmbeddingPolicy (which paths hold vectors,
// their data type, dimensions and distance function) and the indexing
// policy's vectorIndexes. A flat or quantizedFlat index is answered by
// an exact scan (so quantizedFlat's results are those its full-precision
// re-rank approaches); a diskANN index by an approximate graph search
// (package ann) unless the query asks for brute force.
package vector

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
)

// Distance functions, as the policy and VectorDistance's options name
// them.
const (
	Cosine     = "cosine"
	DotProduct = "dotproduct"
	Euclidean  = "euclidean"
)

// Limits of the service's vector search
// (https://learn.microsoft.com/azure/cosmos-db/nosql/vector-search):
// a flat index takes vectors of at most 505 dimensions, the others
// (quantizedFlat, diskANN) at most 4,096.
const (
	MaxDimensions     = 4096
	maxFlatDimensions = 505
)

// Embedding is one entry of a vectorEmbeddingPolicy.
type Embedding struct {
	Path             string `json:"path"`
	DataType         string `json:"dataType"`
	DistanceFunction string `json:"distanceFunction"`
	Dimensions       int    `json:"dimensions"`
}

// Policy is a container's vectorEmbeddingPolicy; nil when it has none.
type Policy struct {
	Embeddings []Embedding
}

// Lookup returns the embedding of a path ("/a/b"), if the policy has one.
func (p *Policy) Lookup(path string) (Embedding, bool) {
	if p == nil {
		return Embedding{}, false
	}
	for _, e := range p.Embeddings {
		if e.Path == path {
			return e, true
		}
	}
	return Embedding{}, false
}

var (
	dataTypes = []string{"float32", "float16", "int8", "uint8"}
	functions = []string{Cosine, DotProduct, Euclidean}
	types     = []string{"flat", "quantizedflat", "diskann"}
)

// ParsePolicy reads a vectorEmbeddingPolicy (nil or null: none) of a
// container whose partition key paths are pkPaths.
func ParsePolicy(raw []byte, pkPaths []string) (*Policy, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var in struct {
		Embeddings *[]json.RawMessage `json:"vectorEmbeddings"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, dberr.BadRequest("The vectorEmbeddingPolicy is invalid: %v. Send {\"vectorEmbeddings\": [{\"path\": \"/vector\", \"dataType\": \"float32\", \"distanceFunction\": \"cosine\", \"dimensions\": 1536}]}.", err)
	}
	if in.Embeddings == nil {
		return nil, dberr.BadRequest("The vectorEmbeddingPolicy needs a vectorEmbeddings array.")
	}
	p := &Policy{}
	for i, r := range *in.Embeddings {
		var e Embedding
		if err := json.Unmarshal(r, &e); err != nil {
			return nil, dberr.BadRequest("vectorEmbeddings[%d] is invalid: %v.", i, err)
		}
		if err := checkPath(e.Path, fmt.Sprintf("vectorEmbeddings[%d]", i)); err != nil {
			return nil, err
		}
		if _, dup := p.Lookup(e.Path); dup {
			return nil, dberr.BadRequest("The vector embedding path '%s' appears more than once in the vectorEmbeddingPolicy.", e.Path)
		}
		if slices.Contains(pkPaths, e.Path) {
			return nil, dberr.BadRequest("The vector embedding path '%s' is also the partition key path; a vector cannot be the partition key.", e.Path)
		}
		var err error
		if e.DataType, err = enum(e.DataType, "float32", dataTypes, "dataType", e.Path); err != nil {
			return nil, err
		}
		if e.DistanceFunction, err = enum(e.DistanceFunction, Cosine, functions, "distanceFunction", e.Path); err != nil {
			return nil, err
		}
		if e.Dimensions < 1 || e.Dimensions > MaxDimensions {
			return nil, dberr.BadRequest("The dimensions of vector embedding path '%s' must be from 1 to %d; got %d.", e.Path, MaxDimensions, e.Dimensions)
		}
		p.Embeddings = append(p.Embeddings, e)
	}
	return p, nil
}

// checkPath checks a vector path: "/" and one or more property names.
func checkPath(path, where string) error {
	if len(path) < 2 || path[0] != '/' || strings.HasSuffix(path, "/") || strings.ContainsAny(path, "*?[]") {
		return dberr.BadRequest("The path of %s must be a property path such as /vector; got '%s'.", where, path)
	}
	return nil
}

// enum is v checked against values (case-insensitively), or def when v
// is empty; it returns the canonical (lower-case) spelling.
func enum(v, def string, values []string, name, path string) (string, error) {
	if v == "" {
		return def, nil
	}
	for _, ok := range values {
		if strings.EqualFold(v, ok) {
			return ok, nil
		}
	}
	return "", dberr.BadRequest("The %s of vector embedding path '%s' must be one of %s; got '%s'.", name, path, strings.Join(values, ", "), v)
}

// DiskANN is the type of an approximate vector index, as ParseIndexes
// spells it.
const DiskANN = "diskann"

// Approximate returns the diskANN index of a path among indexes.
func Approximate(indexes []Index, path string) (Index, bool) {
	for _, ix := range indexes {
		if ix.Path == path && ix.Type == DiskANN {
			return ix, true
		}
	}
	return Index{}, false
}

// Index is one entry of an indexing policy's vectorIndexes.
type Index struct {
	Path                   string   `json:"path"`
	Type                   string   `json:"type"`
	QuantizationByteSize   *int     `json:"quantizationByteSize"`
	IndexingSearchListSize *int     `json:"indexingSearchListSize"`
	VectorIndexShardKey    []string `json:"vectorIndexShardKey"`
}

// ParseIndexes validates an indexing policy's vectorIndexes (nil: none)
// against the container's embedding policy p, with the service's rules:
// each path is in p, once; the index type's dimension limit; each
// option on the index types that take it, within its range. It returns
// them with each type in lower case.
func ParseIndexes(raw []byte, p *Policy) ([]Index, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var in []Index
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, dberr.BadRequest("The indexing policy's vectorIndexes are invalid: %v. Send [{\"path\": \"/vector\", \"type\": \"diskANN\"}].", err)
	}
	seen := map[string]bool{}
	for i, ix := range in {
		if err := checkPath(ix.Path, fmt.Sprintf("vectorIndexes[%d]", i)); err != nil {
			return nil, err
		}
		if seen[ix.Path] {
			return nil, dberr.BadRequest("The vector index path '%s' appears more than once in vectorIndexes.", ix.Path)
		}
		seen[ix.Path] = true
		e, ok := p.Lookup(ix.Path)
		if !ok {
			return nil, dberr.BadRequest("The vector index path '%s' is not in the container's vectorEmbeddingPolicy; every vector index needs an embedding for its path.", ix.Path)
		}
		typ := strings.ToLower(ix.Type)
		in[i].Type = typ
		if !slices.Contains(types, typ) {
			return nil, dberr.BadRequest("The type of vector index '%s' must be flat, quantizedFlat or diskANN; got '%s'.", ix.Path, ix.Type)
		}
		if typ == "flat" && e.Dimensions > maxFlatDimensions {
			return nil, dberr.BadRequest("A flat vector index takes vectors of at most %d dimensions; the embedding at '%s' has %d. Use quantizedFlat or diskANN.", maxFlatDimensions, ix.Path, e.Dimensions)
		}
		if q := ix.QuantizationByteSize; q != nil {
			if typ == "flat" {
				return nil, dberr.BadRequest("quantizationByteSize applies to quantizedFlat and diskANN vector indexes, not to the flat index at '%s'.", ix.Path)
			}
			if *q < 1 || *q > min(512, e.Dimensions) {
				return nil, dberr.BadRequest("The quantizationByteSize of vector index '%s' must be from 1 to %d; got %d.", ix.Path, min(512, e.Dimensions), *q)
			}
		}
		if s := ix.IndexingSearchListSize; s != nil {
			if typ != "diskann" {
				return nil, dberr.BadRequest("indexingSearchListSize applies to diskANN vector indexes, not to the %s index at '%s'.", ix.Type, ix.Path)
			}
			if *s < 10 || *s > 500 {
				return nil, dberr.BadRequest("The indexingSearchListSize of vector index '%s' must be from 10 to 500; got %d.", ix.Path, *s)
			}
		}
		if ix.VectorIndexShardKey != nil && typ != "diskann" {
			return nil, dberr.BadRequest("vectorIndexShardKey applies to diskANN vector indexes, not to the %s index at '%s'.", ix.Type, ix.Path)
		}
	}
	return in, nil
}
