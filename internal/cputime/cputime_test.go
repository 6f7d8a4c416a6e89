package cputime

import "testing"

func TestNowAdvancesWithWork(t *testing.T) {
	if !Supported() {
		t.Skip("no CPU-time source on this platform")
	}
	start := Now()
	x := 0
	for i := range 50_000_000 {
		x += i ^ (x >> 3)
	}
	if Now() <= start {
		t.Errorf("CPU time did not advance after busy work (%d)", x)
	}
}
