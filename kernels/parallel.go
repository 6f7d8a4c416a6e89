package kernels

// Task is work split into independent parts, run by Parallel.
type Task interface {
	// RunPart runs part p. Parts run concurrently and must write disjoint
	// memory.
	RunPart(p int)
}

// idleThreads returns how many of a budget of kernel threads (see Team;
// 0: the package's Threads()) no call in flight is using now, at least 1:
// the caller's own.
func idleThreads(limit int) int {
	return max(1, threadsOf(limit)-int(callsInFlight.Load()))
}

// Parallel runs t.RunPart(0), ..., t.RunPart(parts-1) on up to Threads()
// goroutines, the caller's included and the package's pooled workers for
// the rest, and returns when every part has returned. The threads it uses
// count as busy for the kernels called inside a part (GemmBiasAct,
// Conv3x3BiasAct, Conv3x3Winograd), which then run on the caller's
// goroutine rather than wake workers to compete for the same cores. It
// runs the parts one after another on the caller's goroutine when no
// other thread is idle. The workers, and the caller waiting for them, poll
// for up to spinWait before they park, so that back-to-back calls do not
// pay a thread's wake-up each. It allocates nothing in steady state.
func Parallel(parts int, t Task) { parallel(0, parts, t) }

// parallel is Parallel on a thread budget (see Team).
func parallel(limit, parts int, t Task) {
	nt := min(idleThreads(limit), parts)
	if nt <= 1 {
		for p := range parts {
			t.RunPart(p)
		}
		return
	}
	callsInFlight.Add(int32(nt))
	j := jobPool.Get().(*job)
	j.task = t
	j.nchunks = int64(parts)
	j.next.Store(0)
	startWorkers(nt - 1)
	j.send(nt - 1)
	j.drain()
	j.wait()
	callsInFlight.Add(-int32(nt))
	j.task = nil
	jobPool.Put(j)
}
