// Package fulltext owns a container's full-text policies as the service
// validates them: the fullTextPolicy (which paths hold text, in which
// language) and the indexing policy's fullTextIndexes. The query
// package analyzes and scores the text (query.Analyze, FullTextScore).
package fulltext

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
)

// Language is the one language Ebb analyzes text in: English, as the
// service's en-US analyzer (stop words, Porter stemming).
const Language = "en-US"

// Policy is a container's fullTextPolicy; nil when it has none.
type Policy struct {
	DefaultLanguage string
	// Paths are the text paths ("/a/b") with their language.
	Paths map[string]string
	// sorted are the paths in order.
	sorted []string
}

// SortedPaths are the policy's paths in order; the caller must not
// change them.
func (p *Policy) SortedPaths() []string { return p.sorted }

// Covers reports whether the policy holds a path.
func (p *Policy) Covers(path string) bool {
	if p == nil {
		return false
	}
	_, ok := p.Paths[path]
	return ok
}

// ParsePolicy reads a fullTextPolicy (nil or null: none).
func ParsePolicy(raw []byte) (*Policy, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var in struct {
		DefaultLanguage string `json:"defaultLanguage"`
		Paths           *[]struct {
			Path     string `json:"path"`
			Language string `json:"language"`
		} `json:"fullTextPaths"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, dberr.BadRequest("The fullTextPolicy is invalid: %v. Send {\"defaultLanguage\": \"en-US\", \"fullTextPaths\": [{\"path\": \"/text\", \"language\": \"en-US\"}]}.", err)
	}
	p := &Policy{DefaultLanguage: Language, Paths: map[string]string{}}
	if in.DefaultLanguage != "" {
		lang, err := language(in.DefaultLanguage, "the fullTextPolicy's defaultLanguage")
		if err != nil {
			return nil, err
		}
		p.DefaultLanguage = lang
	}
	if in.Paths == nil {
		return nil, dberr.BadRequest("The fullTextPolicy needs a fullTextPaths array.")
	}
	for _, fp := range *in.Paths {
		if err := checkPath(fp.Path); err != nil {
			return nil, err
		}
		if _, dup := p.Paths[fp.Path]; dup {
			return nil, dberr.BadRequest("The full-text path '%s' appears more than once in the fullTextPolicy.", fp.Path)
		}
		lang := p.DefaultLanguage
		if fp.Language != "" {
			var err error
			if lang, err = language(fp.Language, "the language of full-text path '"+fp.Path+"'"); err != nil {
				return nil, err
			}
		}
		p.Paths[fp.Path] = lang
	}
	p.sorted = slices.Sorted(maps.Keys(p.Paths))
	return p, nil
}

func checkPath(path string) error {
	if len(path) < 2 || path[0] != '/' || strings.HasSuffix(path, "/") || strings.ContainsAny(path, "*?[]") {
		return dberr.BadRequest("A full-text path must be a property path such as /text; got '%s'.", path)
	}
	return nil
}

func language(lang, what string) (string, error) {
	if strings.EqualFold(lang, Language) {
		return Language, nil
	}
	return "", dberr.BadRequest("Ebb analyzes full text in %s only; %s is '%s'.", Language, what, lang)
}

// CheckIndexes validates an indexing policy's fullTextIndexes (nil:
// none): each path, once, in the container's fullTextPolicy p.
func CheckIndexes(raw []byte, p *Policy) error {
	if raw == nil || string(raw) == "null" {
		return nil
	}
	var in []struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return dberr.BadRequest("The indexing policy's fullTextIndexes are invalid: %v. Send [{\"path\": \"/text\"}].", err)
	}
	seen := map[string]bool{}
	for _, ix := range in {
		if err := checkPath(ix.Path); err != nil {
			return err
		}
		if seen[ix.Path] {
			return dberr.BadRequest("The full-text index path '%s' appears more than once in fullTextIndexes.", ix.Path)
		}
		seen[ix.Path] = true
		if !p.Covers(ix.Path) {
			return dberr.BadRequest("The full-text index path '%s' is not in the container's fullTextPolicy; every full-text index needs its path there.", ix.Path)
		}
	}
	return nil
}
