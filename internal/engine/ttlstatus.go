package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
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
	// PurgeLagSeconds is the largest lag (purge time minus expiry time)
	// of this node's latest purge of the container; absent before one.
	PurgeLagSeconds *float64 `json:"purgeLagSeconds,omitempty"`
	Now             string   `json:"now"`
	// LeaseHolder is the node holding the container's purge lease, on a
	// store shared by several nodes.
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
	const week = 7 * 24 * 3600
	oldest, next := int64(0), int64(0)
	err = e.store.View(ctx, func(r storage.Reader) error {
		// expireAt of each entry: own-ttl entries carry it, default
		// entries carry _ts, to which the current default is added.
		visit := func(space byte, shift int64) error {
			prefix := keyspace.CollPrefix(space, c.rid)
			end := keyspace.ExpiryBound(space, c.rid, now+week-shift)
			it := r.Scan(prefix, end, false)
			defer it.Close()
			for it.Next() {
				e, err := keyspace.DecodeExpiry(it.Key(), 0)
				if err != nil {
					return err
				}
				at := e.Time + shift
				switch {
				case at <= now:
					st.Backlog++
					if oldest == 0 || at < oldest {
						oldest = at
					}
					continue
				case next == 0 || at < next:
					next = at
				}
				in := at - now
				if in <= 60 {
					st.Upcoming.Minute++
				}
				if in <= 3600 {
					st.Upcoming.Hour++
				}
				if in <= 24*3600 {
					st.Upcoming.Day++
				}
				st.Upcoming.Week++
			}
			return it.Err()
		}
		if err := visit(keyspace.ExpOwn, 0); err != nil {
			return err
		}
		if c.ttl > 0 {
			return visit(keyspace.ExpTs, int64(c.ttl))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if oldest != 0 {
		st.OldestUnpurgedAgeSeconds = now - oldest
	}
	if next == 0 {
		// Nothing within the week: look for the first deadline at all.
		if at, ok, err := nextDeadline(e.store, c, fromStart); err == nil && ok && at > now {
			next = at
		}
	}
	if next != 0 {
		s := time.Unix(next, 0).UTC().Format(time.RFC3339)
		st.NextDeadline, st.NextDeadlineEpoch = &s, &next
	}
	if lag, ok := e.purger.LastLag(c.rid); ok {
		secs := lag.Seconds()
		st.PurgeLagSeconds = &secs
	}
	if e.cluster != nil {
		st.LeaseHolder, err = e.leaseHolder(c)
		if err != nil {
			return nil, err
		}
	}
	return json.Marshal(st)
}
