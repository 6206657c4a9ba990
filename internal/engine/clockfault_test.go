package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestClockFaults runs testdata/clockfaults: wall-clock faults injected
// through the manual clock, with restarts, and what a client sees after
// each step: the operation's instant (as a query's GetCurrentTimestamp()
// reports it, as an offset from the scenario's start), the items every
// read path shows (instantRig.check compares them all with the model at
// that instant, and a patch's _ts with it), the _ts a write gets, what
// the purger leaves stored, and what Ebb says at start.
//
//	new [clock-control] [no-purger]  an engine at t0, one container
//	put <id> ttl=<n|0>            upsert; prints the _ts it got
//	advance <d> | step <±d>       time passes | the wall clock alone steps
//	set <offset>                  the manual clock's Set, as --clock-control does
//	check                         the instant and the visible items
//	settle                        waits for the purger; prints what is stored,
//	                              and forgets the purged items
//	restart [clock-control] [no-purger]  a new engine on the same store and clock
func TestClockFaults(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	var r *instantRig
	var logs bytes.Buffer
	opts := func(d *datadriven.TestData) Options {
		logs.Reset()
		return Options{
			ClockControl:  d.HasArg("clock-control"),
			DisablePurger: d.HasArg("no-purger"),
			Logger:        slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		}
	}
	offset := func(sec int64) time.Duration { return time.Duration(sec-t0.Unix()) * time.Second }
	datadriven.RunTest(t, "testdata/clockfaults", func(t *testing.T, d *datadriven.TestData) string {
		dur := func() time.Duration {
			v, err := time.ParseDuration(d.CmdArgs[0].Key)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			return v
		}
		switch d.Cmd {
		case "new":
			r = newInstantRig(t, t0, opts(d))
		case "put":
			var ttl int64
			d.ScanArgs(t, "ttl", &ttl)
			r.put(d.CmdArgs[0].Key, "p", ttl, 0)
			return fmt.Sprintf("_ts %s\n", offset(r.model[d.CmdArgs[0].Key].ts))
		case "advance":
			r.clk.Advance(dur())
		case "step":
			r.clk.StepWall(dur())
		case "set":
			r.clk.Set(t0.Add(dur()))
		case "check":
			now := r.check(d.Pos)
			return fmt.Sprintf("instant %s visible %s\n", offset(now), strings.Join(r.want(now), " "))
		case "settle":
			visible := r.want(r.nowQuery())
			waitUntil(t, "the purge of what is invisible at "+d.Pos, func() bool { return r.e.StoredItems() == len(visible) })
			for id := range r.model {
				if !slices.Contains(visible, id) {
					delete(r.model, id)
				}
			}
			return fmt.Sprintf("stored %s\n", strings.Join(visible, " "))
		case "restart":
			r.restart(opts(d))
			var out strings.Builder
			dec := json.NewDecoder(&logs)
			for dec.More() {
				var rec struct {
					Level, Msg string
					Ahead      time.Duration
				}
				if err := dec.Decode(&rec); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&out, "%s ahead %s: %s\n", rec.Level, rec.Ahead, rec.Msg)
			}
			return out.String()
		default:
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		return ""
	})
	if r != nil {
		checkConsistent(t, r.e)
	}
}
