package solver

// prefetch hints the CPU to bring *p into the cache (PREFETCHT0). It never
// faults and has no effect on program semantics.
//
//go:noescape
func prefetch(p *uint32)
