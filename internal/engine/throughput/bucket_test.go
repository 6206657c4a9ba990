package throughput

import (
	"testing"
	"time"
)

func TestBucketAdmitAndRefill(t *testing.T) {
	b := NewBucket(100, 0.05, 0)
	if ok, _ := b.Admit(0); !ok {
		t.Fatal("a full bucket must admit")
	}
	b.Charge(150, 0) // 50 RU of debt
	ok, wait := b.Admit(0)
	if ok || wait < 500*time.Millisecond || wait > 520*time.Millisecond {
		t.Fatalf("admit in debt = %v, %v; want a wait of about 510ms", ok, wait)
	}
	if ok, _ := b.Admit(time.Second); !ok {
		t.Fatal("one second refills 100 RU")
	}
}

func TestBucketPurgeUsesSpareThenFloor(t *testing.T) {
	b := NewBucket(100, 0.05, 0)
	// Idle: everything above half the bucket is spare, plus the floor.
	if allow, _ := b.PurgeAllowance(1, 0); allow != 55 {
		t.Fatalf("idle allowance = %v, want 50 spare + 5 floor", allow)
	}
	// Saturated by foreground work: only the floor is left.
	b.Charge(1000, 0)
	allow, wait := b.PurgeAllowance(1, 0)
	if allow != 5 || wait != 0 {
		t.Fatalf("saturated allowance = %v, %v; want the 5 RU floor", allow, wait)
	}
	b.ChargePurge(5, 0)
	if _, wait := b.PurgeAllowance(5, 0); wait != time.Second {
		t.Fatalf("after spending the floor, wait = %v, want 1s (5 RU at 5 RU/s)", wait)
	}
}
