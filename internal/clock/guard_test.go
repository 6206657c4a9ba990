package clock

import (
	"testing"
	"time"
)

func TestTimeGuardBackwardStep(t *testing.T) {
	m := NewManual(time.Unix(1000, 0))
	g := NewTimeGuard(m, 10*time.Minute, 0)
	if got := g.Now().Unix(); got != 1000 {
		t.Fatalf("now = %d, want 1000", got)
	}
	m.StepWall(-time.Hour)
	if got := g.Now().Unix(); got != 1000 {
		t.Fatalf("after a backward step now = %d, want the high-water 1000", got)
	}
	if got := g.PurgeNow().Unix(); got != 1000-3600 {
		t.Fatalf("purgeNow after a backward step = %d, want the wall %d", got, 1000-3600)
	}
}

func TestTimeGuardForwardJumpCorrected(t *testing.T) {
	m := NewManual(time.Unix(1000, 0))
	g := NewTimeGuard(m, 10*time.Minute, 0)
	m.StepWall(time.Hour) // a bad jump
	if got := g.PurgeNow().Unix(); got != 1000 {
		t.Fatalf("purgeNow during a forward jump = %d, want the monotonic 1000", got)
	}
	m.Advance(5 * time.Minute)
	if got := g.PurgeNow().Unix(); got != 1300 {
		t.Fatalf("purgeNow 5 min into the jump = %d, want 1300", got)
	}
	m.StepWall(-time.Hour) // corrected within the grace
	if got := g.PurgeNow().Unix(); got != 1300 {
		t.Fatalf("purgeNow after the correction = %d, want 1300", got)
	}
}

func TestTimeGuardForwardJumpAccepted(t *testing.T) {
	m := NewManual(time.Unix(1000, 0))
	g := NewTimeGuard(m, 10*time.Minute, 0)
	m.StepWall(time.Hour) // a real correction
	g.PurgeNow()
	m.Advance(10 * time.Minute)
	if got := g.PurgeNow().Unix(); got != 1000+3600+600 {
		t.Fatalf("purgeNow after the grace = %d, want the wall %d", got, 1000+3600+600)
	}
}

func TestTimeGuardAdvanceCountsForBoth(t *testing.T) {
	m := NewManual(time.Unix(1000, 0))
	g := NewTimeGuard(m, 10*time.Minute, 0)
	m.Advance(48 * time.Hour)
	if got, want := g.PurgeNow().Unix(), int64(1000+48*3600); got != want {
		t.Fatalf("purgeNow after Advance = %d, want %d", got, want)
	}
}
