package gateway

import (
	"net/http"

	"github.com/ebbdb/ebb/internal/engine"
)

func (g *Gateway) listOffers(w http.ResponseWriter, r *http.Request) error {
	rows, charge := g.eng.Offers(r.Context())
	return writeFeed(w, "Offers", "", rowList(rows), charge, "")
}

func (g *Gateway) queryOffers(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	res, err := g.eng.QueryOffers(r.Context(), body)
	if err != nil {
		return err
	}
	return writePage(w, "Offers", res)
}

func (g *Gateway) readOffer(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.ReadOffer(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

func (g *Gateway) replaceOffer(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	res, err := g.eng.ReplaceOffer(r.Context(), r.PathValue("id"), body, r.Header.Get("If-Match"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

// badOfferPath answers a path below an offer (offers/{id}/...), which
// names no resource: 400, as the service answers a malformed offer
// address (see resource.CheckOfferID), not the 404 of a missing offer.
func (g *Gateway) badOfferPath(w http.ResponseWriter, r *http.Request) error {
	return &engine.Error{Kind: engine.KindBadRequest, Message: "The path " + r.URL.Path + " is not an offer's: an offer is addressed as offers/{_rid}."}
}
