package gateway

import "net/http"

func (g *Gateway) listOffers(w http.ResponseWriter, r *http.Request) error {
	rows, charge := g.eng.Offers(r.Context())
	return writeFeed(w, "Offers", "", rows, charge, "")
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
	return writeFeed(w, "Offers", "", res.Rows, res.Charge, res.Continuation)
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
