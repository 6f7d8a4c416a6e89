package fleet

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errTransient marks failures a worker waits out (the server is away).
var errTransient = errors.New("the server may be back soon")

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	Name    string // fleet name (CheckName)
	Backend string // backend spec (nets.OpenBackendSpec); default "auto"
	// Trees is the number of games played at once, the tasks taken at a
	// time; default 64.
	Trees int
	// Cache is the directory for downloaded networks (one file per
	// SHA-256); default os.TempDir()/canopy-worker.
	Cache string
	// Log receives one line per event and the throughput reports; nil
	// discards.
	Log io.Writer
	// Report is the interval of throughput lines; default 30 s, < 0 never.
	Report time.Duration
	// Ident names the worker in every game it sends (Origin.Worker);
	// default host/pid.
	Ident string
}

// netFetchTimeout bounds one download of a network.
const netFetchTimeout = 10 * time.Minute

// netStall is how long a download of a network may go without a byte
// before the worker gives it up and tries again: an object replaced
// while it is read (a second Put purges the first one's chunks) never
// sends the rest, and the read would wait for netFetchTimeout, the
// worker holding its evaluation tasks all along.
const netStall = 30 * time.Second

// maxDeliveries is how often a task may fail (its game could not be
// sent) before a worker gives up on it and reports it to the trainer.
const maxDeliveries = 5

// Worker plays the fleet's tasks. Run it once.
type Worker struct {
	opt WorkerOptions
	nc  *nats.Conn
	h   *handles
	// cons is the shared durable tasks consumer; ackWait its AckWait.
	cons    jetstream.Consumer
	ackWait time.Duration

	mu     sync.Mutex
	job    *Job               // the latest job published
	notify chan struct{}      // closed when job changes; replaced then
	cancel context.CancelFunc // stops the batch in play (nil between batches)
	played Job                // the job of the batch in play

	// for the engine of played's network
	netSHA string
	g      games.Game
	e      *engine.Engine
	be     nets.Backend
	origin Origin // this worker and its backend, as games carry them

	// pool holds the engines of evaluation games (eval.go's evaluate).
	pool *engine.Pool
	// netStall is netStall (shorter in tests).
	netStall time.Duration

	games, positions, nodes atomic.Int64
	evals                   atomic.Int64 // evaluation games published
	publishNs               atomic.Int64 // time spent publishing, ns
	busyNs                  atomic.Int64 // time spent with games in play, ns, batches ended
	playSince               atomic.Int64 // start of the batch in play (UnixNano), 0 between batches
}

// NewWorker returns a worker for nc's fleet opt.Name.
func NewWorker(nc *nats.Conn, opt WorkerOptions) (*Worker, error) {
	if err := CheckName(opt.Name); err != nil {
		return nil, err
	}
	if opt.Backend == "" {
		opt.Backend = "auto"
	}
	if opt.Trees <= 0 {
		opt.Trees = 64
	}
	if opt.Cache == "" {
		opt.Cache = filepath.Join(os.TempDir(), "canopy-worker")
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Report == 0 {
		opt.Report = 30 * time.Second
	}
	if opt.Ident == "" {
		host, _ := os.Hostname()
		opt.Ident = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	return &Worker{opt: opt, nc: nc, notify: make(chan struct{}), origin: Origin{Worker: opt.Ident, Build: build()},
		pool: engine.NewPool(engine.PoolOptions{Backend: opt.Backend}), netStall: netStall}, nil
}

// build names the running binary's build: its module version and VCS
// revision ("+modified" for a build with uncommitted changes).
func build() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			modified = "+modified"
		}
	}
	if rev != "" {
		v += " " + rev + modified
	}
	return v
}

func (w *Worker) logf(format string, args ...any) { fmt.Fprintf(w.opt.Log, format+"\n", args...) }

// Counts returns the games, positions and simulations this worker has
// published so far, and the time its publishes took.
func (w *Worker) Counts() (gamesN, positions, nodes int64, publishing time.Duration) {
	return w.games.Load(), w.positions.Load(), w.nodes.Load(), time.Duration(w.publishNs.Load())
}

// EvalGames returns the evaluation games this worker has published.
func (w *Worker) EvalGames() int64 { return w.evals.Load() }

// Busy returns how long this worker has had games in play: the time
// inside self-play of its batches and evaluation matches, which includes waiting on its own
// publishes but not waiting for tasks, jobs or networks. Busy over the
// wall time of Run is the worker's utilisation.
func (w *Worker) Busy() time.Duration {
	d := w.busyNs.Load()
	if t := w.playSince.Load(); t != 0 {
		d += max(0, time.Now().UnixNano()-t)
	}
	return time.Duration(d)
}

// Run plays tasks until ctx ends, then returns nil; an error means the
// worker cannot go on (a job it cannot play, a network that does not
// load). It waits for the trainer to create the fleet, for jobs, and for
// the server when the connection drops.
func (w *Worker) Run(ctx context.Context) error {
	defer w.closeEngine()
	t0 := time.Now()
	defer func() {
		g, _, _, _ := w.Counts()
		wall := time.Since(t0)
		w.logf("worker: %d games, %d evaluation games; busy (games in play) %s of %s, %.1f%%", g, w.EvalGames(), w.Busy().Round(time.Millisecond), wall.Round(time.Millisecond), 100*w.Busy().Seconds()/max(wall.Seconds(), 1e-9))
	}()
	js, err := jetstream.New(w.nc)
	if err != nil {
		return err
	}
	if err := w.attach(ctx, js); err != nil {
		return ignoreDone(ctx, err)
	}
	go w.follow(ctx)
	if w.opt.Report > 0 {
		go w.report(ctx)
	}
	for ctx.Err() == nil {
		job := w.waitJob(ctx)
		if job == nil {
			break
		}
		if job.Semantics != selfplay.Semantics {
			return fmt.Errorf("worker: cannot play the job (run %s, iteration %d): %s",
				job.Run, job.Iteration, semanticsAdvice(job.Build, job.Semantics, w.origin.Build, selfplay.Semantics))
		}
		if err := w.prepare(ctx, *job); err != nil {
			if ctx.Err() != nil {
				break
			}
			if !errors.Is(err, errTransient) {
				return err
			}
			w.logf("%v (retrying)", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		if err := w.batch(ctx, js, *job); err != nil {
			return ignoreDone(ctx, err)
		}
	}
	return nil
}

func ignoreDone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// attach waits until the trainer has created the fleet, then opens it.
func (w *Worker) attach(ctx context.Context, js jetstream.JetStream) error {
	said := false
	for {
		h, err := open(ctx, js, w.opt.Name)
		var cons jetstream.Consumer
		if err == nil {
			cons, err = js.Consumer(ctx, h.n.tasks(), workersConsumer)
		}
		if err == nil {
			w.h, w.cons = h, cons
			w.ackWait = cons.CachedInfo().Config.AckWait
			return nil
		}
		if !said {
			if notYet(err) {
				w.logf("worker: waiting for a trainer to create fleet %q", w.opt.Name)
			} else {
				w.logf("worker: waiting for the server: %v", err)
			}
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// follow watches the job key and records every new job; a job that asks
// for other games than the batch in play stops that batch.
func (w *Worker) follow(ctx context.Context) {
	for ctx.Err() == nil {
		kw, err := w.h.state.Watch(ctx, jobKey)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for e := range kw.Updates() {
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			w.takeJob(e.Value())
		}
		kw.Stop()
	}
}

// takeJob records the job whose JSON is data.
func (w *Worker) takeJob(data []byte) {
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		w.logf("worker: ignoring a job that does not parse: %v", err)
		return
	}
	j.Settings.Upgrade() // a trainer of an earlier release
	w.setJob(&j)
}

// refreshJob reads the job key now: the watch of follow may lag behind
// (after the server restarted, its watcher resumes only once it has
// missed a few heartbeats, 15 s or more), and a task of a later
// iteration says that there is a newer job.
func (w *Worker) refreshJob(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if e, err := w.h.state.Get(cctx, jobKey); err == nil {
		w.takeJob(e.Value())
	}
}

func (w *Worker) setJob(j *Job) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.job != nil && w.job.same(*j) {
		return
	}
	w.job = j
	close(w.notify)
	w.notify = make(chan struct{})
	// A new network for the games in play of an asynchronous job leaves
	// them be: they finish with the network they started with.
	if w.cancel != nil && !w.played.same(*j) && !(j.Async && w.played.sameGames(*j)) {
		w.cancel()
	}
}

// waitJob returns the latest job, waiting for one; nil when ctx ends.
func (w *Worker) waitJob(ctx context.Context) *Job {
	for {
		w.mu.Lock()
		j, ch := w.job, w.notify
		w.mu.Unlock()
		if j != nil {
			return j
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ch:
		}
	}
}

// prepare makes the engine for job's network, fetching it when it is not
// in the cache.
func (w *Worker) prepare(ctx context.Context, job Job) error {
	if job.NetworkSHA256 == w.netSHA && w.g != nil && w.g.Spec() == job.Game {
		return nil
	}
	g, err := games.New(job.Game)
	if err != nil {
		return fmt.Errorf("worker: the job's game: %v", err)
	}
	path, err := w.fetchNet(ctx, job)
	if err != nil {
		return err
	}
	net, _, err := nets.OpenNet(path, g)
	if err != nil {
		return fmt.Errorf("worker: network %s: %v", job.Network, err)
	}
	be, choice, err := nets.OpenBackendSpec(w.opt.Backend, net, nets.BackendOptions{MaxBatch: 256})
	if err != nil {
		return fmt.Errorf("worker: backend %s: %v", w.opt.Backend, err)
	}
	e, err := engine.New(g, be, engine.Options{Leaves: job.Settings.Leaves, Batch: min(256, be.MaxBatch()),
		Slots: engine.SlotsFor(w.opt.Trees, job.Settings.Leaves)})
	if err != nil {
		return err
	}
	w.closeEngine()
	w.g, w.e, w.be, w.netSHA = g, e, be, job.NetworkSHA256
	w.origin.Backend = choice.Backend
	if choice.Detail != "" {
		w.origin.Backend += " (" + choice.Detail + ")"
	}
	w.logf("worker: playing iteration %d of run %s with %s; backend: %s", job.Iteration, job.Run, job.Network, choice)
	return nil
}

func (w *Worker) closeEngine() {
	if w.e != nil {
		w.e.Close()
	}
	if c, ok := w.be.(io.Closer); ok {
		c.Close()
	}
	w.e, w.be, w.g, w.netSHA = nil, nil, nil, ""
}

// fetchNet returns the path of job's network in the cache, downloading it
// (and checking its SHA-256) when it is not there.
func (w *Worker) fetchNet(ctx context.Context, job Job) (string, error) {
	return w.fetchNetwork(ctx, job.Network, job.NetworkSHA256)
}

// fetchNetwork returns the path in the cache of network name, whose
// bytes have SHA-256 sum, downloading it when it is not there.
func (w *Worker) fetchNetwork(ctx context.Context, name, sum string) (string, error) {
	job := Job{Network: name, NetworkSHA256: sum}
	if len(job.NetworkSHA256) != 64 {
		return "", fmt.Errorf("worker: the job's network SHA-256 %q is not 64 hex digits", job.NetworkSHA256)
	}
	if _, err := hex.DecodeString(job.NetworkSHA256); err != nil {
		return "", fmt.Errorf("worker: the job's network SHA-256 %q: %v", job.NetworkSHA256, err)
	}
	path := filepath.Join(w.opt.Cache, job.NetworkSHA256+".safetensors")
	if data, err := os.ReadFile(path); err == nil && sha(data) == job.NetworkSHA256 {
		return path, nil
	}
	// A deadline of our own: without one, each read of the object gives
	// up after nats.go's 5 s API timeout, which a network fetched by many
	// workers at once (a new network published) exceeds, and every
	// worker starts over (BenchmarkNetworkFetch: 50 at once).
	gctx, cancel := context.WithTimeout(ctx, netFetchTimeout)
	defer cancel()
	// In a goroutine: a read of the object in progress waits for its
	// next chunk until the context's deadline, whatever its cancellation
	// (nats.go's object reader), so that a worker stopped while the
	// server is away would hang for netFetchTimeout.
	type fetched struct {
		data []byte
		err  error
	}
	done := make(chan fetched, 1)
	var got atomic.Int64 // bytes read so far
	go func() {
		res, err := w.h.nets.Get(gctx, job.Network)
		if err != nil {
			done <- fetched{nil, err}
			return
		}
		defer res.Close()
		var b bytes.Buffer
		buf := make([]byte, 64<<10)
		for {
			n, err := res.Read(buf)
			b.Write(buf[:n])
			got.Add(int64(n))
			switch {
			case err == io.EOF:
				done <- fetched{b.Bytes(), nil}
				return
			case err != nil:
				done <- fetched{nil, err}
				return
			}
		}
	}()
	// A stalled download is left to end at gctx's deadline (its read
	// cannot be cut short) while the worker tries again.
	watch := time.NewTicker(max(w.netStall/4, 10*time.Millisecond))
	defer watch.Stop()
	last, moved := int64(-1), time.Now()
	var data []byte
	var err error
wait:
	for {
		select {
		case f := <-done:
			data, err = f.data, f.err
			break wait
		case <-ctx.Done():
			return "", ctx.Err()
		case <-watch.C:
			if n := got.Load(); n != last {
				last, moved = n, time.Now()
			} else if time.Since(moved) >= w.netStall {
				return "", fmt.Errorf("worker: fetching network %s: no data for %s after %s (the object replaced while read?): %w",
					job.Network, w.netStall, byteSize(n), errTransient)
			}
		}
	}
	if err != nil {
		return "", fmt.Errorf("worker: fetching network %s: %v: %w", job.Network, err, errTransient)
	}
	if got := sha(data); got != job.NetworkSHA256 {
		return "", fmt.Errorf("worker: network %s has SHA-256 %s, the job says %s (a trainer replaced it; restart the worker)", job.Network, got, job.NetworkSHA256)
	}
	if err := os.MkdirAll(w.opt.Cache, 0o755); err != nil {
		return "", fmt.Errorf("worker: --cache: %v", err)
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return "", fmt.Errorf("worker: --cache: %v", err)
	}
	return path, nil
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// Kinds of task a worker fetched, as classify sorts them.
const (
	taskPlay    = iota // a self-play game of the job in play: play it
	taskEval           // an evaluation game (eval.go)
	taskNewer          // of a later iteration than the job's: handed back a while
	taskDropped        // acknowledged or terminated: nothing to do
)

// classify sorts the task message m fetched while job is played, and
// acknowledges, terminates or hands back those not to be played
// (inHand reports whether a game id is in hand already: a second copy
// is handed back a while).
func (w *Worker) classify(m jetstream.Msg, job Job, inHand func(id int) bool) (task, int) {
	var t task
	if err := json.Unmarshal(m.Data(), &t); err != nil {
		w.logf("worker: dropped a task that does not parse: %v", err)
		m.Term()
		return t, taskDropped
	}
	if t.Eval != nil {
		if t.Eval.Run != t.Run || t.Eval.Iteration != t.Iteration {
			w.logf("worker: dropped an evaluation task of run %s iteration %d naming run %s iteration %d", t.Run, t.Iteration, t.Eval.Run, t.Eval.Iteration)
			m.Term()
			return t, taskDropped
		}
		return t, taskEval
	}
	switch {
	case t.Run != job.Run || t.Iteration < job.Iteration:
		m.Ack() // another run's or a finished iteration's task
		return t, taskDropped
	case t.ID < 0 || t.ID >= job.Games:
		w.logf("worker: dropped task %d of iteration %d: the job has games 0..%d", t.ID, t.Iteration, job.Games-1)
		m.Term()
		return t, taskDropped
	case t.Iteration > job.Iteration:
		// A job this worker has not seen yet: leave it a while.
		m.NakWithDelay(time.Second)
		return t, taskNewer
	case inHand(t.ID):
		m.NakWithDelay(time.Second)
		return t, taskDropped
	}
	return t, taskPlay
}

// heldTask is a self-play task in a worker's hands.
type heldTask struct {
	m     jetstream.Msg
	again string // task.Again
}

// intake is what a worker has taken for one job: the self-play tasks in
// hand (held, by game id), the ids not yet given to a tree (ready, in
// the order taken), the evaluation tasks that came with them, and
// whether a task of a later iteration came. batch fills one and play
// goes on filling it while games end; it is not safe for concurrent
// use (play guards it with its mutex).
type intake struct {
	held  map[int]heldTask
	ready []int
	evals []evalTask
	newer bool
}

// add sorts the task message m fetched while job is played into in
// (classify acknowledges, terminates or hands back those not to be
// played) and returns its kind.
func (in *intake) add(w *Worker, m jetstream.Msg, job Job) int {
	t, k := w.classify(m, job, func(id int) bool { _, ok := in.held[id]; return ok })
	switch k {
	case taskPlay:
		in.held[t.ID] = heldTask{m, t.Again}
		in.ready = append(in.ready, t.ID)
	case taskEval:
		in.evals = append(in.evals, evalTask{task: t, m: m})
	case taskNewer:
		in.newer = true
	}
	return k
}

// takeNewer reports whether a task of a later iteration came since the
// last call, and clears the mark.
func (in *intake) takeNewer() bool {
	n := in.newer
	in.newer = false
	return n
}

// batch takes up to Trees tasks and plays those of job. It takes the
// tasks queued now, or, when there are none, waits up to 2 s for one and
// then takes those queued by then: a worker never sits on tasks waiting
// for a full batch. While the batch plays, play takes more tasks as
// games end, so that the batch goes on as long as the job has tasks.
func (w *Worker) batch(ctx context.Context, js jetstream.JetStream, job Job) error {
	in := &intake{held: map[int]heldTask{}}
	take := func(mb jetstream.MessageBatch) int {
		n := 0
		for m := range mb.Messages() {
			n++
			in.add(w, m, job)
		}
		return n
	}
	mb, err := w.cons.FetchNoWait(w.opt.Trees)
	if err == nil && take(mb) == 0 {
		// FetchMaxWait, not a context deadline, which could end the
		// fetch while the server still sends it a task (lost until
		// AckWait; see Trainer's fetch).
		mb, err = w.cons.Fetch(1, jetstream.FetchMaxWait(2*time.Second))
		if err == nil && take(mb) > 0 && w.opt.Trees > 1 {
			if mb, err = w.cons.FetchNoWait(w.opt.Trees - 1); err == nil {
				take(mb)
			}
		}
	}
	if in.takeNewer() {
		w.refreshJob(ctx)
	}
	if len(in.evals) > 0 {
		// Evaluation first: the trainer's record of an iteration waits
		// for it. The self-play tasks in hand go back to the queue at
		// once, for this worker's next batch or another's.
		for _, h := range in.held {
			h.m.Nak()
		}
		return w.evaluate(ctx, js, in.evals)
	}
	if err != nil && len(in.ready) == 0 {
		if ctx.Err() == nil {
			time.Sleep(500 * time.Millisecond) // the server is away: nats reconnects meanwhile
		}
		return nil
	}
	if len(in.ready) == 0 {
		return nil
	}
	evals, err := w.play(ctx, js, job, in)
	if err != nil || len(evals) == 0 {
		return err
	}
	return w.evaluate(ctx, js, evals)
}

// refillMargin is how many tasks beyond its Trees a worker keeps in hand
// while it plays, so that a slot whose game ends finds the next at once.
func refillMargin(trees int) int { return max(1, trees/8) }

// play plays in's ready ids of job, and more of job's
// tasks as it goes: each time a game ends, it takes tasks to keep
// refillMargin(Trees) ready for the next slot that frees up (a slot
// that finds none ends, and the batch ends with its last slot). It stops
// taking tasks when the job changes (a newer network or iteration) or an
// evaluation task comes, which it returns, to be played next. It
// publishes each finished game and then acknowledges its task; tasks not
// finished are handed back.
func (w *Worker) play(ctx context.Context, js jetstream.JetStream, job Job, in *intake) ([]evalTask, error) {
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w.mu.Lock()
	w.cancel, w.played = cancel, job
	stale := !w.job.same(job) && !(w.job.Async && w.job.sameGames(job))
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.cancel = nil
		w.mu.Unlock()
	}()
	if stale {
		cancel()
	}
	obs := 1
	for _, d := range w.g.ObservationShape() {
		obs *= d
	}
	var (
		mu sync.Mutex // guards in, alive, full
		// alive counts the slots that have not ended: a slot that asks
		// for a game when in.ready is empty ends (selfplay.Config.Next).
		alive  = w.opt.Trees
		full   bool // no more tasks taken: the job changed, or evaluation waits
		wanted = make(chan struct{}, 1)
	)
	want := func() {
		select {
		case wanted <- struct{}{}:
		default:
		}
	}
	finished := make(chan *selfplay.GameRecord, w.opt.Trees+refillMargin(w.opt.Trees))
	pubErr := make(chan error, 1)
	take := func(id int) jetstream.Msg {
		mu.Lock()
		defer mu.Unlock()
		h := in.held[id]
		delete(in.held, id)
		return h.m
	}
	again := func(id int) string {
		mu.Lock()
		defer mu.Unlock()
		return in.held[id].again
	}
	go func() {
		pubErr <- w.publish(ctx, js, job, obs, finished, again, func(id int) { take(id).Ack() },
			func(id int, err error) { w.fail(ctx, js, job, id, take(id), err) })
	}()
	// Keep the tasks in hand: a worker that stops renewing them (dead,
	// stalled) loses them to the others after AckWait.
	tick := time.NewTicker(max(w.ackWait/3, 100*time.Millisecond))
	defer tick.Stop()
	go func() {
		for {
			select {
			case <-bctx.Done():
				return
			case <-tick.C:
				mu.Lock()
				for _, h := range in.held {
					h.m.InProgress()
				}
				for _, t := range in.evals {
					t.m.InProgress()
				}
				mu.Unlock()
			}
		}
	}()
	// Refill: take tasks as games end.
	refilled := make(chan struct{})
	go func() {
		defer close(refilled)
		poll := time.NewTicker(250 * time.Millisecond)
		defer poll.Stop()
		margin := refillMargin(w.opt.Trees)
		for {
			select {
			case <-bctx.Done():
				return
			case <-wanted:
			case <-poll.C:
			}
			w.mu.Lock()
			changed := !w.job.same(job)
			w.mu.Unlock()
			mu.Lock()
			full = full || changed
			n := min(margin, alive) - len(in.ready)
			stop := full || alive == 0
			mu.Unlock()
			if stop || n <= 0 {
				continue
			}
			mb, err := w.cons.FetchNoWait(n)
			if err != nil {
				continue
			}
			for m := range mb.Messages() {
				mu.Lock()
				if k := in.add(w, m, job); k == taskEval || k == taskNewer {
					full = true // evaluation next, or a newer job: let the games in play end
				}
				mu.Unlock()
			}
			mu.Lock()
			newer := in.takeNewer()
			mu.Unlock()
			if newer {
				w.refreshJob(bctx)
			}
		}
	}()
	next := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		want()
		if len(in.ready) == 0 {
			alive--
			return 0, false
		}
		id := in.ready[0]
		in.ready = in.ready[1:]
		return id, true
	}
	t0 := time.Now()
	w.playSince.Store(t0.UnixNano())
	err := selfplay.Run(bctx, w.e, selfplay.Config{Settings: job.Settings, Seed: job.Seed, Next: next, Trees: w.opt.Trees,
		OnGame: func(r *selfplay.GameRecord) error { finished <- r; return nil }})
	close(finished)
	perr := <-pubErr
	w.playSince.Store(0) // first: a reader may miss this batch for a moment, never count it twice
	w.busyNs.Add(int64(time.Since(t0)))
	cancel()
	<-refilled
	mu.Lock()
	for _, h := range in.held {
		h.m.Nak() // unplayed: back to the queue for anyone
	}
	left := in.evals
	mu.Unlock()
	if perr != nil {
		for _, t := range left {
			t.m.Nak()
		}
		return nil, perr
	}
	if err != nil && bctx.Err() == nil {
		for _, t := range left {
			t.m.Nak()
		}
		return nil, fmt.Errorf("worker: self-play: %w", err)
	}
	return left, nil
}

// publish sends every finished game, retrying while the server does
// not answer until it acknowledges the game, then calls done with its
// id; for a game that cannot be sent, it calls failed instead. A game
// larger than the server's max_payload allows travels through N-large.
// again returns the Nats-Msg-Id suffix of a game queued again
// (task.Again).
func (w *Worker) publish(ctx context.Context, js jetstream.JetStream, job Job, obs int, finished <-chan *selfplay.GameRecord, again func(id int) string,
	done func(id int), failed func(id int, err error)) error {
	subj := w.h.n.gameSubject(job.Iteration)
	var buf []byte
	for r := range finished {
		if ctx.Err() != nil {
			continue // drain: the run is ending
		}
		t0 := time.Now()
		var err error
		g := &Game{Run: job.Run, Iteration: job.Iteration, NetworkSHA256: job.NetworkSHA256, Semantics: selfplay.Semantics,
			Origin: w.origin, Record: r}
		buf, err = EncodeGame(buf[:0], g, obs)
		if err != nil {
			failed(r.ID, err)
			continue
		}
		id := msgID(job.Run, job.Iteration, r.ID) + again(r.ID)
		msg := buf
		if limit := w.nc.MaxPayload(); limit > 0 && int64(len(buf)) > messageLimit(limit) {
			if msg, err = w.putLarge(ctx, g, id, buf); err != nil {
				if ctx.Err() == nil {
					failed(r.ID, err)
				}
				continue
			}
		}
		for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
			_, err = js.Publish(ctx, subj, msg, jetstream.WithMsgID(id))
			if err == nil || ctx.Err() != nil || !transient(err) {
				break
			}
			w.logf("worker: publishing game %d: %v (retrying in %s)", r.ID, err, wait)
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				failed(r.ID, err)
			}
			continue
		}
		w.publishNs.Add(int64(time.Since(t0)))
		w.games.Add(1)
		w.positions.Add(int64(r.Positions()))
		w.nodes.Add(r.Nodes)
		done(r.ID)
	}
	return nil
}

// transient reports whether a publish that failed with err may succeed
// when tried again: the server did not answer (away, reconnecting, no
// JetStream leader), rather than refused.
func transient(err error) bool {
	var api *jetstream.APIError
	return !errors.As(err, &api) && !errors.Is(err, nats.ErrMaxPayload) && !errors.Is(err, nats.ErrPermissionViolation) &&
		!errors.Is(err, nats.ErrBadSubject) && !errors.Is(err, nats.ErrAuthorization)
}

// putLarge stores the game message data of g, with message id id, as an
// object of its own in N-large, and returns the reference to publish
// instead. The object's name is unique to this upload: a second worker
// playing the same game never overwrites it.
func (w *Worker) putLarge(ctx context.Context, g *Game, id string, data []byte) ([]byte, error) {
	var nonce [8]byte
	rand.Read(nonce[:])
	name := id + "." + hex.EncodeToString(nonce[:])
	meta := jetstream.ObjectMeta{Name: name, Description: "canopy game",
		Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunkSize(w.nc.MaxPayload())}}
	var err error
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		_, err = w.h.large.Put(ctx, meta, bytes.NewReader(data))
		if err == nil {
			break
		}
		if ctx.Err() != nil || !transient(err) {
			return nil, fmt.Errorf("storing game %d (%s) in object store %s: %w", g.Record.ID, byteSize(int64(len(data))), w.h.n.large(), err)
		}
		w.logf("worker: storing game %d in %s: %v (retrying in %s)", g.Record.ID, w.h.n.large(), err, wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
	return encodeJSON(refMagic, gameRef{Run: g.Run, Iteration: g.Iteration, NetworkSHA256: g.NetworkSHA256, Semantics: g.Semantics,
		Origin: g.Origin, ID: g.Record.ID, Object: name, Size: int64(len(data)), SHA256: sha(data)})
}

// fail hands back the task m of game id, whose game could not be sent
// (err): delivered fewer than maxDeliveries times, it goes back to the
// queue after a delay that doubles with each delivery (for another
// worker, or this one once the trouble passed); then the worker gives up
// on it, terminates it and reports it to the trainer, which queues it
// again. The worker goes on with its other tasks.
func (w *Worker) fail(ctx context.Context, js jetstream.JetStream, job Job, id int, m jetstream.Msg, err error) {
	n := uint64(1)
	if md, merr := m.Metadata(); merr == nil {
		n = md.NumDelivered
	}
	if n < maxDeliveries {
		delay := time.Second << (n - 1)
		w.logf("worker: game %d failed (delivery %d of the task): %v; handed back for %s", id, n, err, delay)
		m.NakWithDelay(delay)
		return
	}
	w.logf("worker: game %d failed on delivery %d of the task: %v; giving up on it (the trainer queues it again)", id, n, err)
	body, jerr := encodeJSON(failMagic, taskFailure{Run: job.Run, Iteration: job.Iteration, ID: id, Origin: w.origin,
		Deliveries: int(n), Error: err.Error()})
	if jerr == nil {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, jerr = js.Publish(pctx, w.h.n.gameSubject(job.Iteration), body,
			jetstream.WithMsgID(fmt.Sprintf("%s.failed.%d", msgID(job.Run, job.Iteration, id), n)))
		cancel()
	}
	if jerr != nil {
		w.logf("worker: cannot report game %d's failure: %v; its task is handed back instead", id, jerr)
		m.NakWithDelay(time.Minute)
		return
	}
	m.Term()
}

// report logs the throughput every Report.
func (w *Worker) report(ctx context.Context) {
	t := time.NewTicker(w.opt.Report)
	defer t.Stop()
	g0, p0, n0, pub0 := w.Counts()
	busy0 := w.Busy()
	t0 := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			g, p, n, pub := w.Counts()
			busy := w.Busy()
			s := now.Sub(t0).Seconds()
			w.logf("worker: %.2f games/s, %.0f positions/s, %.0f simulations/s over %.0f s; busy (games in play) %.1f%% of it, waiting on publishes (alongside play) %.2f%%; %d games in all",
				float64(g-g0)/s, float64(p-p0)/s, float64(n-n0)/s, s, 100*(busy-busy0).Seconds()/s, 100*(pub-pub0).Seconds()/s, g)
			g0, p0, n0, pub0, busy0, t0 = g, p, n, pub, busy, now
		}
	}
}
