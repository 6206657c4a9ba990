package throughput

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
)

// OfferRate reads an offer's RU/s from its content: the manual
// throughput, or the autoscale maximum.
func OfferRate(raw []byte) float64 {
	var o struct {
		Content struct {
			OfferThroughput        float64 `json:"offerThroughput"`
			OfferAutopilotSettings *struct {
				MaxThroughput float64 `json:"maxThroughput"`
			} `json:"offerAutopilotSettings"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return 0
	}
	if a := o.Content.OfferAutopilotSettings; a != nil {
		return a.MaxThroughput
	}
	return o.Content.OfferThroughput
}

// Provisioned is what the client asked for with x-ms-offer-throughput or
// x-ms-cosmos-offer-autopilot-settings.
type Provisioned struct {
	Manual       int
	AutoscaleMax int
}

// Headers are the raw request headers that provision throughput.
type Headers struct {
	Offer     string // x-ms-offer-throughput
	Autopilot string // x-ms-cosmos-offer-autopilot-settings
	// Partitions is Ebb's own x-ebb-partition-count: how many physical
	// partitions a new container gets (engine/partitions.go).
	Partitions string
}

// Parse reads the throughput a create request provisions; nil when it
// provisions none.
func Parse(h Headers) (*Provisioned, error) {
	switch {
	case h.Offer != "" && h.Autopilot != "":
		return nil, dberr.BadRequest("Specify either manual throughput (x-ms-offer-throughput) or autoscale (x-ms-cosmos-offer-autopilot-settings), not both.")
	case h.Offer != "":
		var n int
		if _, err := fmt.Sscanf(h.Offer, "%d", &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(h.Offer) {
			return nil, dberr.BadRequest("The x-ms-offer-throughput header %q is not an integer.", h.Offer)
		}
		return &Provisioned{Manual: n}, Check(Provisioned{Manual: n})
	case h.Autopilot != "":
		var in struct {
			MaxThroughput int `json:"maxThroughput"`
		}
		if err := json.Unmarshal([]byte(h.Autopilot), &in); err != nil {
			return nil, dberr.BadRequest("The x-ms-cosmos-offer-autopilot-settings header is not valid JSON: %v.", err)
		}
		t := Provisioned{AutoscaleMax: in.MaxThroughput}
		return &t, Check(t)
	}
	return nil, nil
}

// Check applies the service's minimums and steps.
func Check(t Provisioned) error {
	switch {
	case t.AutoscaleMax != 0:
		if t.AutoscaleMax < 1000 || t.AutoscaleMax%1000 != 0 {
			return dberr.BadRequest("The autoscale max throughput %d is invalid; it must be at least 1000 RU/s and a multiple of 1000.", t.AutoscaleMax)
		}
	case t.Manual < 400 || t.Manual%100 != 0:
		return dberr.BadRequest("The offer throughput %d is invalid; it must be at least 400 RU/s and a multiple of 100.", t.Manual)
	}
	return nil
}
