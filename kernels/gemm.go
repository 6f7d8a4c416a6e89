package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// gemmArgs is one GEMM problem, shared read-only by the goroutines working on
// it. C = alpha*op(A)*op(B) + beta*C, then + bias[j] + residual (when non-nil;
// residual has leading dimension ldc and may be c itself), then max(., 0)
// when relu. GemmBiasAct passes alpha=1, beta=0.
type gemmArgs struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a              []float32
	lda            int
	b              []float32
	ldb            int
	c              []float32
	ldc            int
	bias, residual []float32
	relu           bool

	im *impl
	// ts is the tile set of the blocked path (nil on the generic path).
	ts *tileSet
	// bp is op(B) packed for the micro-kernels (nil when the blocked path
	// reads B in place); see packB.
	bp []float32
	// kc is the K block size of the blocked path.
	kc int
	// large selects the blocked path's loop order for operands larger
	// than the caches (see largeB).
	large bool
	// conv, when set, makes A the im2col matrix of a 3x3 convolution,
	// expanded block by block (see convRows); a is unused.
	conv convArgs
}

// job is a gemmArgs split into row chunks that the caller and pool workers
// take in turn. Jobs are pooled so that a call allocates nothing.
type job struct {
	gemmArgs
	chunk   int          // rows per chunk (a multiple of the tile height)
	nchunks int64        // number of chunks
	next    atomic.Int64 // next chunk to take
	// pending counts the pool workers sent the job that have not yet
	// finished it; wg parks the caller until they have (see wait).
	pending atomic.Int32
	wg      sync.WaitGroup
	// task, when set, makes the job a Parallel call: chunk i is
	// task.RunPart(i) and gemmArgs is unused.
	task Task
	// limit is the call's thread budget (Team.threads: 0 means the
	// package default, Threads()).
	limit int
}

var jobPool = sync.Pool{New: func() any { return new(job) }}

// minWorkPerThread is the number of multiply-adds below which adding a
// goroutine to a call does not pay for waking it.
const minWorkPerThread = 1 << 20

// gemm runs one checked GEMM (see gemmArgs), splitting rows over the pool
// when the problem is large enough. It allocates nothing in steady state.
func gemm(limit int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias, residual []float32, relu bool) {
	if transB && !transA && m <= dotRowsMax && k > 0 && bias == nil && residual == nil && !relu {
		dotRows(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	j := jobPool.Get().(*job)
	j.limit = limit
	j.gemmArgs = gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, bias: bias, residual: residual, relu: relu,
		im: cur.Load()}
	j.run()
}

// dotRowsMax is the most rows of A for which a GEMM with B transposed
// takes dotRows: an LSTM step of a few environments multiplying by a
// weight matrix's transpose (dx = dgates x W^T) would otherwise pack all
// of B, transposing it through the cache, for two rows (30% of the
// recurrent PPO update's CPU on the Xeon of docs/BENCHMARKS.md).
const dotRowsMax = 4

// dotRows computes C = alpha*A*B^T + beta*C as m*n dot products of rows
// of A with rows of B, both contiguous: B is read once, in place, for
// every row of A at once.
func dotRows(m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for j := range n {
		bj := b[j*ldb : j*ldb+k]
		for i := range m {
			v := alpha * dot(a[i*lda:i*lda+k], bj)
			if beta != 0 {
				v += beta * c[i*ldc+j]
			}
			c[i*ldc+j] = v
		}
	}
}

// gemmConv runs a fused 3x3 convolution: GemmBiasAct with A the im2col
// matrix of cv (see convRows).
func gemmConv(limit, m, n, k int, b []float32, ldb int, bias, residual []float32, relu bool, c []float32, ldc int, cv convArgs) {
	j := jobPool.Get().(*job)
	j.limit = limit
	j.gemmArgs = gemmArgs{m: m, n: n, k: k, alpha: 1, lda: k, b: b, ldb: ldb, c: c, ldc: ldc,
		bias: bias, residual: residual, relu: relu, im: cur.Load(), conv: cv}
	j.run()
}

// run computes the job's GEMM, splitting rows over the pool when the
// problem is large enough, and returns j to the pool.
func (j *job) run() {
	m, n, k, transB := j.m, j.n, j.k, j.transB
	j.ts = j.im.tilesFor(n)
	var bufp *[]float32
	tile := 4
	if j.ts != nil {
		tile = j.ts.mr
		bufp = j.gemmArgs.prepareBlocked()
	} else if transB {
		bufp = j.gemmArgs.prepareGeneric()
	}
	// Split M into chunks of whole tiles, at least minWorkPerThread each,
	// over the threads that other calls in flight leave idle (callers that
	// already split their work over goroutines of their own, like the
	// training of package nets, would otherwise wake workers to compete
	// with each other for the cores).
	busy := int(callsInFlight.Add(1))
	work := m * n * max(k, 1)
	nt := min(threadsOf(j.limit)-busy+1, max(1, work/minWorkPerThread), (m+tile-1)/tile)
	if nt <= 1 {
		j.runRows(0, m)
	} else {
		// About 4 chunks per thread balances uneven progress.
		rows := (m + 4*nt - 1) / (4 * nt)
		rows = (rows + tile - 1) / tile * tile
		j.chunk = rows
		j.nchunks = int64((m + rows - 1) / rows)
		j.next.Store(0)
		startWorkers(nt - 1)
		j.send(min(nt-1, int(j.nchunks)-1))
		j.drain()
		j.wait()
	}
	callsInFlight.Add(-1)
	if bufp != nil {
		bpPool.Put(bufp)
	}
	j.gemmArgs = gemmArgs{} // drop references to the caller's slices
	jobPool.Put(j)
}

// drain runs chunks until none is left.
func (j *job) drain() {
	for {
		i := j.next.Add(1) - 1
		if i >= j.nchunks {
			return
		}
		if j.task != nil {
			j.task.RunPart(int(i))
			continue
		}
		lo := int(i) * j.chunk
		j.runRows(lo, min(lo+j.chunk, j.m))
	}
}

// runRows computes rows [lo, hi) of C.
func (g *gemmArgs) runRows(lo, hi int) {
	if g.conv.src != nil {
		g.convRows(lo, hi)
	} else if g.ts == nil {
		g.genericRows(lo, hi)
	} else {
		g.blockedRows(lo, hi)
	}
}

var (
	// callsInFlight counts the gemm calls running now (see job.run).
	callsInFlight atomic.Int32
	workQueue     = make(chan *job, maxThreads)
	workersMu     sync.Mutex
	workersLive   atomic.Int32
)

// startWorkers makes sure at least n pool workers exist. Workers live for the
// life of the process; idle, they poll workQueue for spinWait and then
// sleep on it.
func startWorkers(n int) {
	if int(workersLive.Load()) >= n {
		return
	}
	workersMu.Lock()
	defer workersMu.Unlock()
	for int(workersLive.Load()) < n {
		workersLive.Add(1)
		go worker()
	}
}

// spinWait is how long a pool worker polls for its next job before it
// parks, and how long a caller polls for the workers helping it before it
// parks (both yielding to runnable goroutines meanwhile). Waking a parked
// thread took about 100 us on the 2-vCPU VMs this was measured on (an
// idle vCPU halts and the host must schedule it again), more than a
// batch-16 Forward's slice of work takes to compute in bfloat16; polling
// briefly keeps back-to-back calls from paying it, at a cost bounded by
// spinWait per call when no call follows (docs/BENCHMARKS.md).
const spinWait = 50 * time.Microsecond

// send hands j to n pool workers (fewer when the queue is full: the
// caller's drain then takes their chunks).
func (j *job) send(n int) {
	j.pending.Store(int32(n))
	j.wg.Add(n)
	for range n {
		select {
		case workQueue <- j:
		default:
			j.done()
		}
	}
}

// done marks one worker's (or one unsent helper's) share of j finished.
func (j *job) done() {
	j.pending.Add(-1)
	j.wg.Done()
}

// wait returns when every worker sent j has finished it: it polls for
// up to spinWait, then parks.
func (j *job) wait() {
	if j.pending.Load() > 0 {
		start := time.Now()
		for j.pending.Load() > 0 && time.Since(start) < spinWait {
			runtime.Gosched()
		}
	}
	j.wg.Wait()
}

func worker() {
	for {
		j := nextJob()
		j.drain()
		j.done()
	}
}

// nextJob receives the next job from workQueue, polling for up to
// spinWait before it parks on the channel.
func nextJob() *job {
	start := time.Now()
	for time.Since(start) < spinWait {
		select {
		case j := <-workQueue:
			return j
		default:
			runtime.Gosched()
		}
	}
	return <-workQueue
}
