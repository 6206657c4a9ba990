package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ebbdb/ebb/internal/engine/expiry"
	"github.com/ebbdb/ebb/internal/storage"
)

// TTLStatus describes a container's expiry state: what no Cosmos tool
// shows. It is computed from the expiry keyspaces on request.
type TTLStatus struct {
	// Mode is "off", "on-no-default" or "on".
	Mode       string `json:"mode"`
	DefaultTTL *int64 `json:"defaultTtl"`
	// Backlog is how many items have expired but are not purged yet.
	Backlog int `json:"backlog"`
	// OldestUnpurgedAgeSeconds is how long ago the oldest of them expired.
	OldestUnpurgedAgeSeconds int64 `json:"oldestUnpurgedAgeSeconds"`
	// NextDeadline is when the next item expires, nil when none will.
	NextDeadline      *string `json:"nextDeadline"`
	NextDeadlineEpoch *int64  `json:"nextDeadlineEpoch"`
	// Upcoming counts the items expiring within the next minute, hour,
	// day and week (each window includes the shorter ones).
	Upcoming struct {
		Minute int `json:"minute"`
		Hour   int `json:"hour"`
		Day    int `json:"day"`
		Week   int `json:"week"`
	} `json:"upcoming"`
	// CountsCapped says Backlog and Upcoming stopped at a million items
	// and are lower bounds; the status stays cheap however large they are.
	CountsCapped bool `json:"countsCapped,omitempty"`
	// PurgeLagSeconds is the largest lag (purge time minus expiry time)
	// of this node's latest purge of the container; absent before one.
	PurgeLagSeconds *float64 `json:"purgeLagSeconds,omitempty"`
	Now             string   `json:"now"`
	// LeaseHolder names the nodes holding the purge leases of the
	// container's partitions (sorted, joined with commas), on a store
	// shared by several nodes.
	LeaseHolder string `json:"leaseHolder,omitempty"`
}

// ContainerTTL returns the TTL status of a container as JSON.
func (e *Engine) ContainerTTL(ctx context.Context, dbID, collID string) ([]byte, error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return nil, err
	}
	now := e.now().Unix()
	var st TTLStatus
	st.Now = time.Unix(now, 0).UTC().Format(time.RFC3339)
	switch {
	case !c.ttl.On():
		st.Mode = "off"
	case c.ttl < 0:
		st.Mode = "on-no-default"
	default:
		st.Mode = "on"
	}
	if c.ttl.On() {
		d := int64(c.ttl)
		st.DefaultTTL = &d
	}
	if !c.ttl.On() {
		return json.Marshal(st)
	}
	var n expiry.Counts
	err = e.store.View(ctx, func(r storage.Reader) (err error) {
		n, err = c.expiryIndex().Counts(r, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	st.Backlog, st.CountsCapped = n.Backlog, n.Capped
	st.Upcoming.Minute, st.Upcoming.Hour, st.Upcoming.Day, st.Upcoming.Week = n.Minute, n.Hour, n.Day, n.Week
	if n.Oldest != 0 {
		st.OldestUnpurgedAgeSeconds = now - n.Oldest
	}
	if n.Next != 0 {
		s := time.Unix(n.Next, 0).UTC().Format(time.RFC3339)
		st.NextDeadline, st.NextDeadlineEpoch = &s, &n.Next
	}
	if lag, ok := e.purger.LastLag(c.rid); ok {
		secs := lag.Seconds()
		st.PurgeLagSeconds = &secs
	}
	if e.cluster != nil {
		st.LeaseHolder, err = e.leaseHolders(c)
		if err != nil {
			return nil, err
		}
	}
	return json.Marshal(st)
}
