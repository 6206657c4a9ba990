package resource

import (
	"encoding/json"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/throughput"
)

// OfferContent is an offer's content for provisioned throughput tp.
func OfferContent(tp throughput.Provisioned) []byte {
	if tp.AutoscaleMax > 0 {
		b, _ := json.Marshal(map[string]any{
			"offerAutopilotSettings": map[string]any{"maxThroughput": tp.AutoscaleMax},
		})
		return b
	}
	b, _ := json.Marshal(map[string]any{"offerThroughput": tp.Manual})
	return b
}

// OfferJSON renders offer id (etag etag) of the resource resourceRID at
// resourceSelf, with content, last modified at now.
func OfferJSON(id, etag, resourceRID, resourceSelf string, content []byte, now int64) []byte {
	pairs := []document.Pair{
		{Key: "resource", Val: document.AppendQuoted(nil, resourceSelf)},
		{Key: "offerType", Val: []byte(`"Invalid"`)},
		{Key: "offerResourceId", Val: document.AppendQuoted(nil, resourceRID)},
		{Key: "offerVersion", Val: []byte(`"V2"`)},
		{Key: "content", Val: content},
		{Key: "id", Val: document.AppendQuoted(nil, id)},
	}
	body := document.Rebuild(pairs)
	ms, _ := document.ObjectMembers(body)
	return document.WithSystemProps(nil, body, ms, document.SystemProps{RID: id, Self: "offers/" + id + "/", Etag: etag, Ts: now})
}
