package zero

import (
	"testing"
	"time"
)

// TestETAOverlapped checks the estimate on overlapped iterations: each
// takes 15 s from its start to its record, and one starts every 10 s, so
// the iterations left take 10 s each, not 15 (the sum of durations the
// estimate used before counted the overlap twice).
func TestETAOverlapped(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	var c eta
	for i, want := range []time.Duration{
		105 * time.Second,        // one record: 15 s per iteration so far, 7 left
		75 * time.Second,         // two records 25 s after the first start: 12.5 s x 6
		35 * time.Second / 3 * 5, // three after 35 s: 11.67 s x 5 (a sum of durations says 75 s)
	} {
		started := t0.Add(time.Duration(i) * 10 * time.Second)
		if got := c.finished(started, started.Add(15*time.Second), 7-i); got != want {
			t.Errorf("record %d: ETA %v, want %v", i+1, got, want)
		}
	}
}
