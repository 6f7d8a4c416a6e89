//go:build perfinject

package connect4

// perfInjectSink keeps the injected work from being optimised away.
var perfInjectSink uint64

// perfInject is extra work that `make perf-selftest` builds into the fast
// playout's move loop (RandomPlayout, built with -tags perfinject) to
// prove that the performance gate (package perf) reports a regression in
// the workloads that run this loop: some 40 instructions per move, as a
// careless change to the loop might add. Normal builds compile the no-op
// of perfinject_off.go instead.
//
//go:noinline
func perfInject(r uint64) {
	x := r
	for range 16 {
		x = x*0x9e3779b97f4a7c15 + 1
	}
	perfInjectSink += x
}
