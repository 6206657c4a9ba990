package engine

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/storage"
)

// writeOffer creates the offer for a database or container.
// REQUIRES: called inside an Update.
func writeOffer(w storage.Writer, tp Throughput, resourceRID, resourceSelf string, now int64) (*offer, error) {
	n, err := nextNumber(w)
	if err != nil {
		return nil, err
	}
	// Offer ids are four characters, like the service's.
	id := resource.RIDString([]byte{byte(n >> 16), byte(n >> 8), byte(n)})
	o := &offer{id: id, etag: resource.Etag(n), resourceRID: resourceRID, resourceSelf: resourceSelf}
	o.raw = resource.OfferJSON(o.id, o.etag, o.resourceRID, o.resourceSelf, resource.OfferContent(tp), now)
	o.ru = throughput.OfferRate(o.raw)
	return o, w.Set(keyspace.CatOfferKey(id), o.raw)
}

// Offers returns every offer, ordered by id.
func (e *Engine) Offers(ctx context.Context) ([][]byte, float64) {
	cat := e.catalogSnapshot()
	ids := make([]string, 0, len(cat.offers))
	for id := range cat.offers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([][]byte, len(ids))
	for i, id := range ids {
		out[i] = cat.offers[id].raw
	}
	return out, throughput.CatalogRead
}

// ReadOffer returns one offer by its id.
func (e *Engine) ReadOffer(ctx context.Context, id string) (Resource, error) {
	if err := resource.CheckOfferID(id); err != nil {
		return Resource{}, err
	}
	cat := e.catalogSnapshot()
	o, ok := cat.offers[id]
	if !ok {
		if cat = e.onMiss(cat); cat != nil {
			o, ok = cat.offers[id]
		}
	}
	if !ok {
		return Resource{}, dberr.NotFound("Resource Not Found. The offer '%s' does not exist.", id)
	}
	return Resource{Body: o.raw, ETag: o.etag, Charge: throughput.CatalogRead}, nil
}

// ReplaceOffer changes the throughput of an offer. Only content may
// change; the offer keeps its id and the resource it belongs to.
func (e *Engine) ReplaceOffer(ctx context.Context, id string, body []byte, ifMatch string) (Resource, error) {
	if err := resource.CheckOfferID(id); err != nil {
		return Resource{}, err
	}
	if _, err := document.ObjectBody(body); err != nil {
		return Resource{}, err
	}
	var in struct {
		Content *struct {
			OfferThroughput        *int `json:"offerThroughput"`
			OfferAutopilotSettings *struct {
				MaxThroughput int `json:"maxThroughput"`
			} `json:"offerAutopilotSettings"`
		} `json:"content"`
		OfferResourceID string `json:"offerResourceId"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Resource{}, dberr.BadRequest("The offer is invalid: %v.", err)
	}
	if in.Content == nil {
		return Resource{}, dberr.BadRequest("The offer has no content; send content.offerThroughput or content.offerAutopilotSettings.maxThroughput.")
	}
	var tp Throughput
	switch {
	case in.Content.OfferAutopilotSettings != nil:
		tp.AutoscaleMax = in.Content.OfferAutopilotSettings.MaxThroughput
	case in.Content.OfferThroughput != nil:
		tp.Manual = *in.Content.OfferThroughput
	default:
		return Resource{}, dberr.BadRequest("The offer content must have offerThroughput or offerAutopilotSettings.maxThroughput.")
	}
	if err := throughput.Check(tp); err != nil {
		return Resource{}, err
	}
	if _, err := e.ReadOffer(ctx, id); err != nil {
		return Resource{}, err
	}
	e.catMu.Lock()
	defer e.catMu.Unlock()
	cat := e.catalogSnapshot()
	old, ok := cat.offers[id]
	if !ok {
		return Resource{}, dberr.NotFound("Resource Not Found. The offer '%s' does not exist.", id)
	}
	if ifMatch != "" && ifMatch != "*" && ifMatch != old.etag {
		return Resource{}, ErrPreconditionFailed
	}
	if in.OfferResourceID != "" && in.OfferResourceID != old.resourceRID {
		return Resource{}, dberr.BadRequest("The offer's offerResourceId cannot be changed.")
	}
	o := *old
	now := e.now().Unix()
	err := e.store.Update(ctx, func(w storage.Writer) error {
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		o.etag = resource.Etag(n)
		o.raw = resource.OfferJSON(o.id, o.etag, o.resourceRID, o.resourceSelf, resource.OfferContent(tp), now)
		o.ru = throughput.OfferRate(o.raw)
		return w.Set(keyspace.CatOfferKey(id), o.raw)
	})
	if err != nil {
		return Resource{}, err
	}
	next := cat.clone()
	next.offers[id] = &o
	e.publish(next)
	e.indexer.kick() // more throughput may ask for more partitions (growPartitions)
	return Resource{Body: o.raw, ETag: o.etag, Charge: throughput.CatalogWrite}, nil
}
