package batcher

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// histogram counts durations (ns) in fixed log-scale buckets: four buckets
// per power of two, so a reported percentile is within 12.5% of the true
// one. Adding is one atomic increment; safe for concurrent use.
type histogram struct {
	counts [histBuckets]atomic.Uint64
}

const histBuckets = 4 * 64

// bucketOf maps v >= 0 to its bucket: values 0-3 have their own buckets;
// for v >= 4 with top bit e, bucket 4*(e-1) + the next two bits.
func bucketOf(v int64) int {
	if v < 4 {
		return int(max(v, 0))
	}
	u := uint64(v)
	e := bits.Len64(u) - 1
	return 4*(e-1) + int(u>>(e-2)&3)
}

// bucketBounds is the half-open range [lo, hi) of bucket i.
func bucketBounds(i int) (lo, hi uint64) {
	if i < 4 {
		return uint64(i), uint64(i) + 1
	}
	e, sub := i/4+1, uint64(i%4)
	return (4 + sub) << (e - 2), (5 + sub) << (e - 2)
}

func (h *histogram) add(ns int64) { h.counts[bucketOf(ns)].Add(1) }

// quantile returns the midpoint of the bucket holding the q-quantile, 0
// when empty.
func (h *histogram) quantile(q float64) time.Duration {
	var total uint64
	var c [histBuckets]uint64
	for i := range c {
		c[i] = h.counts[i].Load()
		total += c[i]
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total-1)) + 1 // 1-based rank of the quantile
	var cum uint64
	for i, x := range c {
		cum += x
		if cum >= rank {
			lo, hi := bucketBounds(i)
			return time.Duration((lo + hi - 1) / 2)
		}
	}
	return 0
}

// Stats is a snapshot of a batcher's counters.
type Stats struct {
	Rows    uint64  // requests evaluated
	Batches uint64  // backend calls
	Errors  uint64  // backend calls that failed
	Mean    float64 // rows per batch
	Fill    float64 // Mean / MaxBatch
	// QueueWait: from Commit to the start of the request's backend call,
	// over one request in queueSample (8).
	QueueWaitP50, QueueWaitP99 time.Duration
	// Compute: one backend call.
	ComputeP50, ComputeP99 time.Duration
}

// Stats returns the counters so far. It is safe to call at any time.
func (b *Batcher) Stats() Stats {
	s := Stats{Rows: b.rows.Load(), Batches: b.batches.Load(), Errors: b.errs.Load(),
		QueueWaitP50: b.queueWait.quantile(0.5), QueueWaitP99: b.queueWait.quantile(0.99),
		ComputeP50: b.compute.quantile(0.5), ComputeP99: b.compute.quantile(0.99)}
	if s.Batches > 0 {
		s.Mean = float64(s.Rows) / float64(s.Batches)
		s.Fill = s.Mean / float64(b.maxBatch)
	}
	return s
}
