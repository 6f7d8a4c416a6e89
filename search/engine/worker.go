package engine

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/canopy-go/canopy/batcher"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
)

// leaf is one request in flight: a walker's leaf or a job's root.
//
// A simultaneous state (every player choosing at once) needs one row per
// player, each from that player's view with its own legal actions: the
// leaf then sends its own row for player 0 and its seats' rows for the
// others (seats[q-1] for player q, records of their own with the same
// walker), and is complete when all have come back (got).
type leaf struct {
	j      *Job
	w      *search.Walker // nil for the root evaluation
	mask   games.Mask     // legal actions of the evaluated state (the row's player's at a simultaneous state)
	mover  int            // whose view the observation and value take
	priors bool           // the result's policy applies (decision state)
	tag    uint64         // index in the worker's leaf table
	roll   []float64      // blended jobs: the leaf's rollout returns

	// Simultaneous-move games only (seats nil otherwise).
	seats []*leaf   // the rows of players 1.. at a simultaneous state
	owner *leaf     // a seat row's leaf (nil for the leaf itself)
	sim   bool      // the evaluated state is simultaneous: every seat sends a row
	sent  int       // rows submitted for the current state
	got   int       // rows completed
	own   []float32 // per player: its row's value (scalar head: its own view)
	vals  []float32 // per player: its row's value vector (per-player head), players x vsize
}

// rows is the number of network rows l's current state needs.
func (l *leaf) rows() int {
	if l.sim {
		return len(l.seats) + 1
	}
	return 1
}

// row returns the record of l's i-th row (0: l itself).
func (l *leaf) row(i int) *leaf {
	if i == 0 {
		return l
	}
	return l.seats[i-1]
}

// Job is one search in progress: a tree searching one root with a
// simulation budget, its walkers and their requests. A Job belongs to one
// Worker; only that worker's goroutine touches it while it runs, and its
// owner may read or change it (Tree, Root, SetTree) only between the
// done callback and the next Start.
type Job struct {
	tree    *search.Tree
	root    games.State // position to search (written by the owner)
	budget  *atomic.Int64
	own     atomic.Int64 // the budget unless shared (Analyze)
	sims    int64        // the budget given to the last Start
	walkers []*leaf
	rootL   *leaf
	priors  []float32 // the root's network policy (softmax over legal)

	blendW float64         // weight of the network value (1: no rollout)
	blend  *search.Rollout // rollout mixed into leaf values when blendW < 1
	// netVisits: a new leaf goes to the network on its netVisits-th visit;
	// the visits before are valued by blend's rollout alone (SetNetVisits).
	netVisits int

	gumbel *gumbel // Gumbel root search (gumbel.go); nil: the tree's rule at the root

	// paranoid spreads the mover's value as -v/(players-1) to the others
	// even when the network gives every player's (SetBackup).
	paranoid bool

	// rootV is the sum of the value vectors backed up by this search's
	// simulations (every one passes through the root), rootN their
	// number: RootValues.
	rootV []float64
	rootN int64

	prepared bool // root expanded
	nsel     int  // leaves selected in the current step
	nsub     int  // of those, submitted (ErrFull may interrupt)
	pending  int  // submitted, not yet completed

	done func(w *Worker, j *Job) // called on the owner goroutine when the budget is spent
}

// addRoot counts one backed-up value vector in the root's mean.
func (j *Job) addRoot(v []float64) {
	for i, x := range v {
		j.rootV[i] += x
	}
	j.rootN++
}

// RootValues writes into dst (one entry per player) the root's value for
// every player: the mean of the value vectors the simulations of the
// last Start (and its continuations) backed up, each player's own
// estimate of its return under MaxN, in [-1, 1]. It returns the number
// of simulations averaged (0: dst is left alone). The tree itself keeps
// each player's value only on the edges that player chooses, so the
// root's mover is the only player whose value the root's edges hold.
func (j *Job) RootValues(dst []float64) int64 {
	if j.rootN == 0 {
		return 0
	}
	for i, x := range j.rootV {
		dst[i] = x / float64(j.rootN)
	}
	return j.rootN
}

// MergeRootValues writes into dst the root values of jobs (RootValues)
// averaged with their simulation counts as weights, and reports false
// when no job has any (dst is then zeros).
func MergeRootValues(jobs []*Job, dst []float64) bool {
	clear(dst)
	var n int64
	for _, j := range jobs {
		for i, x := range j.rootV {
			dst[i] += x
		}
		n += j.rootN
	}
	if n == 0 {
		return false
	}
	for i := range dst {
		dst[i] /= float64(n)
	}
	return true
}

// Tree is the job's tree (nil before SetTree).
func (j *Job) Tree() *search.Tree { return j.tree }

// Root is the state the next Start searches. The owner writes the
// position into it (CloneInto, Resample) before Start; the job never
// modifies it.
func (j *Job) Root() games.State { return j.root }

// Spent is the number of simulations the last Start has used so far.
func (j *Job) Spent() int64 { return j.sims - max(j.budget.Load(), 0) }

// SetBlend mixes a rollout into every network leaf value: value = w *
// network + (1-w) * rollout (study 000 uses w = 0.5 and an eight-turn
// rollout). w = 1 (or ro nil) turns blending off. The rollout runs on the
// worker's goroutine after the leaf's row is committed: while the network
// evaluates it where the batcher's consumer has it (many leaves in
// flight), before the evaluation where a lone search runs its batches
// itself (batcher.Client.Wait).
func (j *Job) SetBlend(w float64, ro *search.Rollout) {
	j.blendW, j.blend = w, ro
	if ro == nil || !(w < 1) {
		j.blendW, j.blend = 1, nil
	}
}

// SetNetVisits makes the network evaluate a leaf (its priors, and its
// value blended with the rollout) only on the leaf's n-th visit: the
// simulations that end at it before are valued by the blend's rollout
// alone and leave it unexpanded, so that the network is spent on the
// leaves the search comes back to (AlphaGo's expansion threshold, Silver
// et al. 2016, whose leaves were likewise valued by rollouts until
// expanded). n <= 1, or a job without a blend (SetBlend), evaluates
// every leaf on its first visit. The trees must expand at evaluation
// (search.Options.ExpandVisits 0), as the engine's do.
func (j *Job) SetNetVisits(n int) { j.netVisits = n }

// rollOnly reports whether w's leaf is to be valued by the rollout alone
// (SetNetVisits).
func (j *Job) rollOnly(w *search.Walker) bool {
	if j.netVisits <= 1 || j.blend == nil {
		return false
	}
	n := w.PendingVisits()
	return n >= 0 && n < j.netVisits-1
}

// Backups of network values (SetBackup, Settings.Backup): search's,
// named here too. MaxN gives each player its own component of a
// per-player value head, so that every player selects on its own
// expected return (MaxN: Luckhardt & Irani 1986, in MCTS Sturtevant
// 2008; with a learned value vector Petosa & Balch 2019).
const (
	BackupMaxN     = search.BackupMaxN
	BackupParanoid = search.BackupParanoid
)

// BackupKinds are the values of the backup option.
var BackupKinds = search.BackupKinds

// SetBackup selects how network values become the per-player values the
// tree backs up: BackupMaxN ("" too) or BackupParanoid.
func (j *Job) SetBackup(kind string) { j.paranoid = kind == BackupParanoid }

// SetTree attaches tree t to j. The job's walkers are t's own walkers
// first..first+n-1 (search.Tree.Walkers), seeded from t's seed: a job
// with one leaf in flight and first 0 builds exactly the tree that t's
// single-threaded Search would with an equivalent evaluator. Jobs that
// share a tree (Analyze) take disjoint walker ranges. The next Start
// prepares t's root from the network.
func (j *Job) SetTree(t *search.Tree, first int) {
	j.tree = t
	ws := t.Walkers(first + len(j.walkers))[first:]
	for i, l := range j.walkers {
		l.w = ws[i]
	}
	j.unprepare()
}

// unprepare makes the next step evaluate the root again.
func (j *Job) unprepare() {
	j.prepared = false
	j.rootL.sent, j.rootL.got = 0, 0
}

// Worker is one search goroutine's state: its jobs' leaf records, its
// batcher client and its ready and blocked queues. A Worker is used by
// one goroutine at a time.
type Worker struct {
	e       *Engine
	client  *batcher.Client
	leaves  []*leaf // by tag
	comps   []batcher.Completion
	ready   []*Job
	blocked []*Job
	err     error
}

// NewWorker returns a worker for e. Drive it with Loop on one goroutine
// (or let RunWorkers do so).
func (e *Engine) NewWorker() *Worker {
	return &Worker{e: e, client: batcher.NewClient(e.b.Slots()), comps: make([]batcher.Completion, 256)}
}

// Engine is the worker's engine.
func (w *Worker) Engine() *Engine { return w.e }

// NewJob makes a job with leaves leaf records (leaves in flight per step,
// via virtual loss) registered in w's table. done, when non-nil, is
// called on w's goroutine each time a Start's budget is spent. Attach a
// tree with SetTree and write the position into Root before Start.
func (w *Worker) NewJob(leaves int, done func(w *Worker, j *Job)) *Job {
	g := w.e.game
	simul := g.Type().Dynamics == games.Simultaneous
	npri := g.NumActions()
	if simul {
		npri *= g.NumPlayers() // one block per player (search.Walker.Priors)
	}
	j := &Job{root: g.NewInitialState(), priors: make([]float32, npri), done: done, blendW: 1, rootV: make([]float64, g.NumPlayers())}
	j.budget = &j.own
	mk1 := func() *leaf {
		l := &leaf{j: j, mask: games.NewMask(g.NumActions()), tag: uint64(len(w.leaves)), roll: make([]float64, g.NumPlayers())}
		w.leaves = append(w.leaves, l)
		return l
	}
	mk := func() *leaf {
		l := mk1()
		if simul {
			np := g.NumPlayers()
			l.own, l.vals = make([]float32, np), make([]float32, np*w.e.vsize)
			for range np - 1 {
				r := mk1()
				r.owner = l
				l.seats = append(l.seats, r)
			}
		}
		return l
	}
	j.rootL = mk()
	for range max(leaves, 1) {
		j.walkers = append(j.walkers, mk())
	}
	return j
}

// Start queues j to search its Root with sims simulations: a network
// evaluation of the root (its policy becomes the root priors, see
// search.Tree.PrepareWith), then lock-steps of leaves.
func (w *Worker) Start(j *Job, sims int) {
	j.sims = int64(sims)
	j.budget.Store(j.sims)
	j.unprepare()
	clear(j.rootV)
	j.rootN = 0
	w.queue(j)
}

// queue makes j ready without touching its budget or root.
func (w *Worker) queue(j *Job) {
	j.nsel, j.nsub, j.pending = 0, 0, 0
	w.ready = append(w.ready, j)
}

// Fail stops the worker's loop with err (the first error is kept).
func (w *Worker) Fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Loop runs until no job is ready or in flight, or ctx ends (then it
// drains its requests and returns ctx.Err()), or a job or callback fails
// (Fail).
func (w *Worker) Loop(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			w.drain()
			return err
		}
		for len(w.ready) > 0 && w.err == nil {
			j := w.ready[len(w.ready)-1]
			w.ready = w.ready[:len(w.ready)-1]
			w.step(j)
		}
		if w.err != nil {
			w.drain()
			return w.err
		}
		if w.client.InFlight() == 0 {
			if len(w.blocked) == 0 {
				return nil
			}
			runtime.Gosched()
		} else {
			n, err := w.client.Wait(ctx, w.comps)
			if err != nil {
				continue // ctx ended: drained at the top
			}
			for _, c := range w.comps[:n] {
				w.complete(c)
			}
		}
		if len(w.blocked) > 0 {
			w.ready = append(w.ready, w.blocked...)
			w.blocked = w.blocked[:0]
		}
	}
}

// drain collects and releases every request still in flight, and
// forgets the queued jobs.
func (w *Worker) drain() {
	for w.client.InFlight() > 0 {
		n, _ := w.client.Wait(context.Background(), w.comps)
		for _, c := range w.comps[:n] {
			w.e.b.Release(c.Ticket)
		}
	}
	w.ready, w.blocked = w.ready[:0], w.blocked[:0]
}

// Reset clears a failure so the worker can run again (after Loop
// returned an error that its owner handled).
func (w *Worker) Reset() { w.err = nil }

// submit reserves a slot for l, writes the network input (the encoding
// reads l.mask, which classify or the root set to s's legal actions) and
// commits. It returns false on ErrFull (the caller retries later).
func (w *Worker) submit(l *leaf, s games.State) bool {
	t, row, err := w.e.b.Reserve(w.client, l.tag)
	if err != nil {
		if !errors.Is(err, batcher.ErrFull) {
			w.Fail(err)
		}
		return false
	}
	w.e.encode(s, l.mover, l.mask, row)
	w.e.b.Commit(t)
	w.e.evals.Add(1)
	return true
}

// classify sets l's mover, legal mask and whether priors apply for the
// decision state s. Chance states are first advanced by sampling (s is
// the walker's scratch copy); it reports false when that reached a
// terminal state, whose returns are then in l.w.Value.
func classify(l *leaf, s games.State) bool {
	for s.CurrentPlayer() == games.ChancePlayer {
		s.Apply(s.(games.ChanceState).SampleChance(l.w.Ctx.Rng))
	}
	if s.IsTerminal() {
		l.w.Ctx.Terminal(s, l.w.Value)
		return false
	}
	l.priors = true
	l.setState(s)
	return true
}

// setState prepares l's rows for the decision state s: one row from the
// mover's view, or at a simultaneous state one row per player from that
// player's view with its own legal actions (player q's priors then go to
// block q of the walker's priors, search.Walker.Priors).
func (l *leaf) setState(s games.State) {
	l.sent, l.got = 0, 0
	p := s.CurrentPlayer()
	l.sim = p == games.SimultaneousPlayer && l.seats != nil
	if !l.sim {
		l.mover = max(p, 0)
		s.Legal(l.mask)
		return
	}
	ss := s.(games.SimultaneousState)
	for q := range len(l.seats) + 1 {
		r := l.row(q)
		r.mover, r.priors = q, true
		ss.LegalFor(q, r.mask)
	}
}

// step advances job j: root evaluation, or one lock-step of leaves.
func (w *Worker) step(j *Job) {
	if !j.prepared {
		l := j.rootL
		if l.sent == 0 {
			l.priors = true
			l.setState(j.root)
		}
		for l.sent < l.rows() {
			if !w.submit(l.row(l.sent), j.root) {
				if w.err == nil {
					w.blocked = append(w.blocked, j)
				}
				return
			}
			l.sent++
		}
		return
	}
	t := j.tree
	if j.nsel == 0 {
		// (1) select up to len(walkers) leaves; terminal ones, and those
		// valued by the rollout alone (SetNetVisits), are backed up now.
		for j.nsel < len(j.walkers) && j.claim() {
			l := j.walkers[j.nsel]
			leaf := j.selectLeaf(l.w)
			if leaf && j.rollOnly(l.w) {
				j.blend.Evaluate(l.w.Ctx, l.w.State, l.w.Value, nil)
				l.w.KeepLeaf()
				leaf = false
			}
			if !leaf || !classify(l, l.w.State) {
				t.Backup(l.w, l.w.Value, nil)
				j.addRoot(l.w.Value)
				w.e.nodes.Add(1)
				continue
			}
			j.nsel++
		}
		if j.nsel == 0 {
			if j.done != nil {
				j.done(w, j)
			}
			return
		}
	}
	// (2) submit the selected leaves not yet sent; a blended job rolls
	// each leaf out (on the scratch state, already encoded) while the
	// network works.
	for j.nsub < j.nsel {
		l := j.walkers[j.nsub]
		for l.sent < l.rows() {
			if !w.submit(l.row(l.sent), l.w.State) {
				if w.err == nil {
					w.blocked = append(w.blocked, j)
				}
				return
			}
			l.sent++
		}
		if j.blend != nil {
			j.blend.Evaluate(l.w.Ctx, l.w.State, l.roll, nil)
		}
		j.nsub++
		j.pending++
	}
}

// complete handles one finished request.
func (w *Worker) complete(c batcher.Completion) {
	b := w.e.b
	l := w.leaves[c.Tag]
	pol, v, err := b.Result(c.Ticket)
	if err != nil {
		b.Release(c.Ticket)
		w.Fail(err)
		return
	}
	if o := l.owner; o != nil || l.sim {
		// One seat's row of a simultaneous state: its priors go to its
		// block, its value is kept until every seat's row is back.
		if o == nil {
			o = l
		}
		w.completeSeat(l, o, pol, v, b.Values(c.Ticket))
		b.Release(c.Ticket)
		if o.got++; o.got < o.rows() {
			return
		}
		l = o
	}
	j := l.j
	if l.w == nil {
		var pri []float32
		if l.sim {
			pri = j.priors // the seats' blocks, written by completeSeat
		} else {
			pri = j.priors
			if !maskedSoftmax(pol, l.mask, j.priors) {
				pri = nil
			}
			b.Release(c.Ticket)
		}
		j.tree.PrepareWith(j.root, pri)
		j.prepared = true
		if j.gumbel != nil {
			j.gumbel.begin(j, pri, v)
		}
		w.ready = append(w.ready, j)
		return
	}
	switch {
	case l.sim:
		simValues(l.w.Value, l.own, l.vals, w.e.vsize, j.paranoid)
	case w.e.vsize > 1 && !j.paranoid:
		fillValues(l.w.Value, l.mover, b.Values(c.Ticket))
	default:
		fillValue(l.w.Value, l.mover, v)
	}
	if j.blend != nil {
		for i := range l.w.Value {
			l.w.Value[i] = j.blendW*l.w.Value[i] + (1-j.blendW)*l.roll[i]
		}
	}
	if !l.sim {
		if l.priors {
			maskedSoftmax(pol, l.mask, l.w.Priors)
		}
		b.Release(c.Ticket)
	}
	j.pending--
	if j.pending > 0 || j.nsub < j.nsel {
		return
	}
	// (3) back up the step's leaves in selection order.
	for _, l := range j.walkers[:j.nsel] {
		var pri []float32
		if l.priors {
			pri = l.w.Priors
		}
		j.tree.Backup(l.w, l.w.Value, pri)
		j.addRoot(l.w.Value)
	}
	w.e.nodes.Add(int64(j.nsel))
	j.nsel, j.nsub = 0, 0
	w.ready = append(w.ready, j)
}

// maskedSoftmax is nets.MaskedSoftmax with a fast path for the case
// where every legal logit is the same finite number (the random backend,
// or an untrained net's flat policy): the result is then exactly what
// nets.MaskedSoftmax computes, exp(0)/k = float32(1/k) for each legal
// action, without k calls to math.Exp.
func maskedSoftmax(logits []float32, legal games.Mask, probs []float32) bool {
	k, v, same := 0, float32(0), true
	for a := range legal.All() {
		if int(a) >= len(logits) {
			continue
		}
		if k == 0 {
			v = logits[a]
		} else if logits[a] != v {
			same = false
			break
		}
		k++
	}
	if !same || k == 0 || math.IsInf(float64(v), 0) || v != v {
		return nets.MaskedSoftmax(logits, legal, probs)
	}
	clear(probs[:len(logits)])
	p := float32(1 / float64(k))
	for a := range legal.All() {
		if int(a) < len(logits) {
			probs[a] = p
		}
	}
	return true
}

// fillValue writes the per-player value vector for a network value v
// from mover's view: v for the mover, -v/(players-1) for the others.
func fillValue(dst []float64, mover int, v float32) {
	x := math.Max(-1, math.Min(1, float64(v)))
	if len(dst) == 1 {
		dst[0] = x
		return
	}
	o := -x / float64(len(dst)-1)
	for i := range dst {
		dst[i] = o
	}
	dst[mover] = x
}

// fillValues writes the per-player value vector for a per-player
// network head whose row vals is seat-rotated (vals[i] is the value of
// player (mover+i) mod players), each clamped to [-1, 1].
func fillValues(dst []float64, mover int, vals []float32) {
	n := len(dst)
	for i, v := range vals[:n] {
		dst[(mover+i)%n] = math.Max(-1, math.Min(1, float64(v)))
	}
}

// completeSeat takes the result of seat row r of leaf o (r == o for
// player 0) at a simultaneous state: the row's masked policy becomes
// block r.mover of the priors (the walker's, or the job's at the root)
// and its value is kept in o.own and o.vals.
func (w *Worker) completeSeat(r, o *leaf, pol []float32, v float32, vals []float32) {
	n := w.e.game.NumActions()
	dst := o.j.priors
	if o.w != nil {
		dst = o.w.Priors
	}
	q := r.mover
	if !maskedSoftmax(pol, r.mask, dst[q*n:(q+1)*n]) {
		clear(dst[q*n : (q+1)*n]) // no usable policy: uniform for this player
	}
	o.own[q] = v
	if w.e.vsize > 1 {
		copy(o.vals[q*w.e.vsize:(q+1)*w.e.vsize], vals)
	}
}

// simValues writes the per-player values of a simultaneous state from
// every player's own evaluation (own[q]: player q's row's value from its
// view; vals: the rows of a per-player head, vsize each, seat-rotated
// from their player). There is no mover whose view could stand for the
// others', so each player's view counts:
//
//   - per-player head, MaxN: player q's value is the mean over every
//     player's row of that row's entry for q (each row seat-rotated from
//     its player, each entry clamped): every view's estimate of q's
//     return, as the scalar case below uses every view. (q's own row
//     alone, the first rule, made search worse than the network's policy
//     on four-player Sushi Go: docs/RESULTS.md, section 10);
//   - scalar head, or paranoid: the mean over players q of the vector
//     fillValue gives for q's value from q's view (v_q for q, -v_q/(n-1)
//     for the others). With two players that is (v_0 - v_1)/2 for player
//     0, so the zero-sum reading of a scalar head is kept.
func simValues(dst []float64, own, vals []float32, vsize int, paranoid bool) {
	n := len(dst)
	if vsize > 1 && !paranoid {
		for q := range n {
			var sum float64
			for r := range n {
				sum += math.Max(-1, math.Min(1, float64(vals[r*vsize+(q-r+n)%n])))
			}
			dst[q] = sum / float64(n)
		}
		return
	}
	var sum float64
	for _, v := range own[:n] {
		sum += math.Max(-1, math.Min(1, float64(v)))
	}
	for q := range n {
		x := math.Max(-1, math.Min(1, float64(own[q])))
		// x from q's own view, -(sum-x)/(n-1) from the others', over n views
		dst[q] = (x - (sum-x)/float64(n-1)) / float64(n)
	}
}

// RunWorkers runs n workers, each on its own goroutine: setup(i, w)
// creates and starts worker i's jobs (on the calling goroutine, in
// order); the workers then loop until all their work is done. The first
// error (or ctx's) is returned after every worker has drained.
func (e *Engine) RunWorkers(ctx context.Context, n int, setup func(i int, w *Worker) error) error {
	ws := make([]*Worker, n)
	for i := range ws {
		ws[i] = e.NewWorker()
		if err := setup(i, ws[i]); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.Loop(ctx)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}
