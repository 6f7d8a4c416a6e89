package main

import (
	"strings"
	"testing"
	"time"
)

// Progress written to a file or a pipe is whole lines, one per tenth of
// the target, with no \r (issue 39, also-fix list: progress redrawn only on
// a terminal); on a terminal the line is redrawn.
func TestProgressLines(t *testing.T) {
	var b strings.Builder
	p := progress{w: &b, n: 20, t0: time.Now()}
	for kept := 1; kept <= 20; kept++ {
		p.update(kept, 2*kept)
	}
	p.done()
	out := b.String()
	if strings.Contains(out, "\r") || strings.Count(out, "\n") != 10 || !strings.HasPrefix(out, "2 kept of 4 labelled") {
		t.Errorf("redirected progress %q: want 10 whole lines, no \\r", out)
	}
	b.Reset()
	p = progress{w: &b, term: true, n: 20, t0: time.Now()}
	p.update(1, 1)
	p.update(2, 3)
	p.done()
	if got := b.String(); !strings.HasPrefix(got, "\r1 kept of 1 labelled") || strings.Count(got, "\r") != 2 || !strings.HasSuffix(got, "\n") {
		t.Errorf("terminal progress %q: want two redraws and a final newline", got)
	}
}
