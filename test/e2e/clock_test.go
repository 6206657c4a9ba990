package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/server"
)

// stopOrFail stops e's server for a restart.
func stopOrFail(t *testing.T, e *env) {
	t.Helper()
	if err := e.stop(t); err != nil && err != context.DeadlineExceeded {
		t.Fatal(err)
	}
}

// createTs creates an item and returns its _ts.
func createTs(t *testing.T, e *env, c *azcosmos.ContainerClient, body string) int64 {
	t.Helper()
	r, err := c.CreateItem(e.ctx, pk, []byte(body), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	return int64(decode(t, r.Value)["_ts"].(float64))
}

// TestClockGlitchChangesNothing: the wall clock jumps a day ahead for a
// minute and is corrected, inside --ttl-clock-grace. Through the SDK no
// item is hidden early, writes get the true _ts, a new ttl-5 item expires
// five true seconds later, and a restart changes none of it. (The time
// guard's scenarios, including restarts and steps back, are in the
// engine's testdata/clockfaults.)
func TestClockGlitchChangesNothing(t *testing.T) {
	dir := t.TempDir()
	wall := clock.NewManual(epoch)
	e := startWith(t, server.Config{DataDir: dir, Clock: wall})
	c := ttlContainer(t, e, "glitch", int32p(-1))
	createTs(t, e, c, `{"id":"hour","pk":"p","ttl":3600}`)
	wall.Advance(time.Minute)

	wall.StepWall(24 * time.Hour)
	if !visibleEverywhere(t, e, c, "hour") {
		t.Fatal("a day-ahead glitch hid an item with an hour to live")
	}
	if ts := createTs(t, e, c, `{"id":"five","pk":"p","ttl":5}`); ts != epoch.Unix()+60 {
		t.Fatalf("a write during the glitch got _ts %+ds, want the true +60s", ts-epoch.Unix())
	}
	wall.Advance(4 * time.Second)
	if !visibleEverywhere(t, e, c, "five") {
		t.Fatal("the ttl-5 item is gone after 4 true seconds")
	}
	wall.Advance(time.Second)
	if visibleEverywhere(t, e, c, "five") {
		t.Fatal("the ttl-5 item is visible 5 true seconds after it was written")
	}
	wall.StepWall(-24 * time.Hour)
	stopOrFail(t, e)

	e = startWith(t, server.Config{DataDir: dir, Clock: wall})
	db, _ := e.client.NewDatabase("db-glitch")
	c, _ = db.NewContainer("glitch")
	if !visibleEverywhere(t, e, c, "hour") {
		t.Fatal("after the correction and a restart the hour item is hidden")
	}
	if ts := createTs(t, e, c, `{"id":"after","pk":"p"}`); ts != epoch.Unix()+65 {
		t.Fatalf("a write after the restart got _ts %+ds, want the true +65s", ts-epoch.Unix())
	}
}

// TestManualClockAheadThenRealClock: a user's test moves the manual clock
// (--clock-control) a year ahead; the data directory is then served on
// the real clock. Writes get the real time, not a year ahead, and an item
// that the manual clock had expired but that is live by the real clock is
// visible.
func TestManualClockAheadThenRealClock(t *testing.T) {
	dir := t.TempDir()
	real := clock.NewSystem()
	e := startWith(t, server.Config{DataDir: dir, ClockControl: true, DisablePurger: true})
	e.clock.Set(real.Now())
	c := ttlContainer(t, e, "manual", int32p(-1))
	createTs(t, e, c, `{"id":"day","pk":"p","ttl":86400}`)
	e.clock.Advance(365 * 24 * time.Hour)
	if visibleEverywhere(t, e, c, "day") {
		t.Fatal("a year on, the day item is visible under the manual clock")
	}
	createTs(t, e, c, `{"id":"future","pk":"p"}`)
	stopOrFail(t, e)

	e = startWith(t, server.Config{DataDir: dir, Clock: real})
	db, _ := e.client.NewDatabase("db-manual")
	c, _ = db.NewContainer("manual")
	ts := createTs(t, e, c, `{"id":"now","pk":"p"}`)
	if d := ts - real.Now().Unix(); d > 5 || d < -5 {
		t.Fatalf("a write on the real clock got _ts %+ds from the real time", d)
	}
	if !visibleEverywhere(t, e, c, "day") {
		t.Fatal("the day item, live by the real clock, is hidden")
	}
}

// TestClockControlEndpoint: POST /_ebb/clock moves the manual clock at
// once; a set backwards holds Ebb's time still (no _ts goes back, no
// expired item returns); an advance a Duration cannot hold is a 400.
func TestClockControlEndpoint(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	c := ttlContainer(t, e, "control", int32p(-1))
	createTs(t, e, c, `{"id":"ten","pk":"p","ttl":10}`)

	if r := rc.do(t, "POST", "/_ebb/clock", nil, []byte(`{"advanceSeconds":3600}`)); r.status != 200 {
		t.Fatalf("advance: %d %s", r.status, r.body)
	}
	if ts := createTs(t, e, c, `{"id":"later","pk":"p"}`); ts != epoch.Unix()+3600 {
		t.Fatalf("after an advance of an hour a write got _ts %+ds", ts-epoch.Unix())
	}
	if r := rc.do(t, "POST", "/_ebb/clock", nil, []byte(`{"set":"`+epoch.Format(time.RFC3339)+`"}`)); r.status != 200 {
		t.Fatalf("set back: %d %s", r.status, r.body)
	}
	if visibleEverywhere(t, e, c, "ten") {
		t.Fatal("setting the clock back made an expired item visible again")
	}
	if ts := createTs(t, e, c, `{"id":"held","pk":"p"}`); ts != epoch.Unix()+3600 {
		t.Fatalf("after a set backwards a write got _ts %+ds, want the held +3600s", ts-epoch.Unix())
	}
	for _, body := range []string{`{"advanceSeconds":1e12}`, `{"advanceSeconds":-1}`} {
		r := rc.do(t, "POST", "/_ebb/clock", nil, []byte(body))
		if r.status != 400 || !strings.Contains(string(r.body), "advanceSeconds must be between 0 and 9e9") {
			t.Fatalf("%s: %d %s, want 400 naming the bound", body, r.status, r.body)
		}
	}
}
