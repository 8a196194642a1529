package admin

import (
	"testing"
	"time"
)

// TestKeyedLimiterAttemptsThatDoNotFailCostNothing: attempts that end
// without a failure (no bcrypt slot free, or the right password) leave the
// client's budget whole, however they interleave; failures take it, and
// attempts in flight cannot overdraw it. Giving reserved tokens back with
// rate.Reservation.CancelAt lost some once later reservations existed: a
// flood drained the bucket with one failure in two minutes.
func TestKeyedLimiterAttemptsThatDoNotFailCostNothing(t *testing.T) {
	k := newKeyedLimiter(6*time.Second, 10)
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		at := now.Add(time.Duration(i) * time.Millisecond)
		a, _, okA := k.take("c", at)
		b, _, okB := k.take("c", at.Add(time.Microsecond))
		if !okA || !okB {
			t.Fatalf("attempt %d refused with no failure yet", i)
		}
		a(false, at.Add(2*time.Microsecond))
		b(false, at.Add(3*time.Microsecond))
	}
	at := now.Add(time.Second)
	var inFlight []func(bool, time.Time)
	for i := range 10 {
		done, full, ok := k.take("c", at)
		if !ok || full != (i == 0) {
			t.Fatalf("attempt %d in flight: ok %v, full %v", i, ok, full)
		}
		inFlight = append(inFlight, done)
	}
	if _, _, ok := k.take("c", at); ok {
		t.Fatal("an 11th attempt in flight overdraws a budget of 10")
	}
	for _, done := range inFlight {
		done(true, at)
	}
	if _, _, ok := k.take("c", at.Add(time.Second)); ok {
		t.Error("10 failures left budget for another attempt before 6 s")
	}
	if _, _, ok := k.take("c", at.Add(7*time.Second)); !ok {
		t.Error("no attempt allowed 7 s after 10 failures")
	}
}
