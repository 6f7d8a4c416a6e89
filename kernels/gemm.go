package kernels

import (
	"sync"
	"sync/atomic"
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
	wg      sync.WaitGroup
	// task, when set, makes the job a Parallel call: chunk i is
	// task.RunPart(i) and gemmArgs is unused.
	task Task
}

var jobPool = sync.Pool{New: func() any { return new(job) }}

// minWorkPerThread is the number of multiply-adds below which adding a
// goroutine to a call does not pay for waking it.
const minWorkPerThread = 1 << 20

// gemm runs one checked GEMM (see gemmArgs), splitting rows over the pool
// when the problem is large enough. It allocates nothing in steady state.
func gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias, residual []float32, relu bool) {
	j := jobPool.Get().(*job)
	j.gemmArgs = gemmArgs{transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
		a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, bias: bias, residual: residual, relu: relu,
		im: cur.Load()}
	j.run()
}

// gemmConv runs a fused 3x3 convolution: GemmBiasAct with A the im2col
// matrix of cv (see convRows).
func gemmConv(m, n, k int, b []float32, ldb int, bias, residual []float32, relu bool, c []float32, ldc int, cv convArgs) {
	j := jobPool.Get().(*job)
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
	nt := min(Threads()-busy+1, max(1, work/minWorkPerThread), (m+tile-1)/tile)
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
		helpers := min(nt-1, int(j.nchunks)-1)
		j.wg.Add(helpers)
		for range helpers {
			select {
			case workQueue <- j:
			default:
				j.wg.Done() // queue full: the caller's drain takes the chunks
			}
		}
		j.drain()
		j.wg.Wait()
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
// life of the process and sleep on workQueue when idle.
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

func worker() {
	for j := range workQueue {
		j.drain()
		j.wg.Done()
	}
}
