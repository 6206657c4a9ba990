package index

import (
	"encoding/binary"
	"net/url"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/query"
)

// What a page served from an index carries out of it: the marker and
// policy fingerprint its continuation token starts with, and its index
// metrics. The engine runs the page (query.Plan.Page) and writes them.

// Continuation tokens of index plans start with a marker and the policy
// fingerprint; query tokens start with their version byte (1).
const (
	FilterToken  = 'I' // a filter plan (Source)
	OrderedToken = 'O' // an ORDER BY plan (Ordered)
)

// SplitToken splits a decoded continuation token into the query token
// and, for an index plan's token, its marker and the policy fingerprint
// it was issued under (kind 0 for a scan's token or none). The error is
// query.ErrBadContinuation.
func SplitToken(raw []byte) (tok []byte, kind byte, fp uint64, err error) {
	if len(raw) > 0 && (raw[0] == FilterToken || raw[0] == OrderedToken) {
		if len(raw) < 9 {
			return nil, 0, 0, query.ErrBadContinuation
		}
		return raw[9:], raw[0], binary.BigEndian.Uint64(raw[1:9]), nil
	}
	return raw, 0, 0, nil
}

// TokenPrefix is what an index plan's query token is wrapped in.
func TokenPrefix(kind byte, fp uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{kind}, fp)
}

// Index returns the filter source s is, or (promoted) the one an
// *Ordered walks: what the page's metrics read.
func (s *Source) Index() *Source { return s }

// Fingerprint is the fingerprint of the policy s's index follows: what
// its continuation tokens carry (TokenPrefix).
func (s *Source) Fingerprint() uint64 { return s.ip.fp }

// Times returns the time s has spent walking index entries (lookup) and
// fetching their items (load), for the query metrics.
func (s *Source) Times() (lookup, load time.Duration) { return s.lookup, s.load }

// Utilization renders x-ms-cosmos-index-utilization: URL-encoded JSON
// in the service's shape, naming the index of source (nil: none) and
// the indexes that would serve the query's filters but the policy
// leaves out.
func Utilization(source *Source, potential []string) string {
	var used *accessPlan
	if source != nil {
		used = source.ip
	}
	var b strings.Builder
	single := func(spec string) {
		b.WriteString(`{"FilterExpression":"","IndexSpec":`)
		b.Write(document.AppendQuoted(nil, spec))
		b.WriteString(`,"FilterPreciseSet":true,"IndexPreciseSet":true,"IndexImpactScore":"High"}`)
	}
	b.WriteString(`{"UtilizedSingleIndexes":[`)
	if used != nil && used.composite == nil {
		single(used.spec)
	}
	b.WriteString(`],"PotentialSingleIndexes":[`)
	for i, p := range potential {
		if i > 0 {
			b.WriteByte(',')
		}
		single(p)
	}
	b.WriteString(`],"UtilizedCompositeIndexes":[`)
	if used != nil && used.composite != nil {
		b.WriteString(`{"IndexSpecs":[`)
		for i, p := range used.composite {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(document.AppendQuoted(nil, p))
		}
		b.WriteString(`],"IndexPreciseSet":true,"IndexImpactScore":"High"}`)
	}
	b.WriteString(`],"PotentialCompositeIndexes":[]}`)
	return url.QueryEscape(b.String())
}
