package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/batcher"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// Options configure an Engine. Zero fields take the defaults.
type Options struct {
	// Workers is the number of search goroutines RunWorkers and Analyze
	// start. Default GOMAXPROCS.
	Workers int
	// Leaves is the number of leaves one tree has in flight (virtual
	// loss) in Analyze. Default 1. Jobs choose their own (Worker.NewJob).
	Leaves int
	// Batch is the batcher's MaxBatch. Default: the backend's preferred.
	Batch int
	// Wait is the batcher's wait for a fuller batch (see batcher.Options).
	// Default: none (-1): workers submit every leaf they can before they
	// block, so rows that are not ready now only come after this batch's
	// results; the batch grows on its own while the backend computes.
	Wait time.Duration
	// Slots is the batcher ring size; default covers every leaf in flight
	// of 64 trees. Set it from the expected number of trees with SlotsFor.
	Slots int
	// Paced makes the batcher wait for the rows of every search running
	// on the engine (Searchers and Evaluate callers announce theirs) before
	// it runs a batch, up to a few milliseconds and only while one of them
	// is still running (not blocked waiting for its results): for many goroutines that
	// each search one position (agents in concurrent games), whose rows
	// would otherwise trickle in while the backend's threads hold the CPU.
	Paced bool
	// LegalActions appends the legal actions to every row, one value per
	// action (1 legal, 0 not), after the game's observation: for
	// evaluators outside Canopy that take the legal mask beside the
	// observation (package pyapi hands both to a Python callable). The
	// backend's input size must then be the observation size plus
	// NumActions.
	LegalActions bool
	// Consumers is the number of batcher consumer goroutines (see
	// batcher.Options.Workers). Default 1. With 2, one forms batch k+1
	// while the backend holds batch k, so a backend that waits on
	// something outside (package pyapi's Python evaluator) gets its next
	// batch at once; the backend must then be safe for concurrent use.
	Consumers int
}

// SlotsFor returns a ring size for trees trees with leaves leaves each.
func SlotsFor(trees, leaves int) int { return trees*max(leaves, 1) + trees + 64 }

// Engine is a batcher in front of a backend plus counters. It is safe
// for concurrent use: any number of Workers (each on its own goroutine)
// and Evaluate calls may use one Engine at once; their rows share the
// batches.
type Engine struct {
	game    games.Game
	be      *TimedBackend
	b       *batcher.Batcher
	opt     Options
	inSize  int
	polSize int
	// vsize is the backend's values per row: 1 (scalar head, mover's
	// view) or the game's player count (per-player head, mover first).
	vsize int
	// enc writes a network row from a state: the game's observation, plus
	// the legal-move plane for nets trained with it (nets.EncodingFor).
	enc *nets.Encoder
	// legal says whether enc reads the legal actions; masks holds the
	// scratch masks Evaluate then needs (one per concurrent call).
	legal bool
	// acts says that rows end with the legal actions (Options.LegalActions)
	// after obsN observation values.
	acts  bool
	obsN  int
	masks sync.Pool // *games.Mask

	nodes  atomic.Int64 // simulations backed up
	evals  atomic.Int64 // network rows submitted
	active atomic.Int64 // rows the running searches keep in flight (Paced)
	// producers is the number of goroutines running those searches and
	// evaluations (Paced: batcher.Options.Producers).
	producers atomic.Int64
}

// running announces to a Paced batcher a search or evaluation on the
// caller's goroutine that keeps rows rows in flight; stopped ends it.
func (e *Engine) running(rows int64) { e.active.Add(rows); e.producers.Add(1) }
func (e *Engine) stopped(rows int64) { e.active.Add(-rows); e.producers.Add(-1) }

// New starts an engine for g on backend be. The backend's input size
// picks the encoding (nets.EncodingFor): g's observation, or the
// observation followed by the legal-move plane; its policy size must be
// g's action count.
// MemoryBytes is the memory, in bytes, of the batcher ring of an engine
// made by New with opt for g, whose backend takes in inputs per row and
// prefers batches of preferred rows (used when opt.Batch is 0); see
// batcher.RingBytes. The searches' trees are their owners' (self-play:
// selfplay.Config.MemoryBytes) and the backend's buffers its own.
func (opt Options) MemoryBytes(g games.Game, in, preferred int) int64 {
	slots := opt.Slots
	if slots <= 0 {
		slots = SlotsFor(64, max(opt.Leaves, 1))
	}
	return batcher.RingBytes(batcher.Options{MaxBatch: opt.Batch, Slots: slots}, preferred, in, g.NumActions())
}

func New(g games.Game, be nets.Backend, opt Options) (*Engine, error) {
	in, ps := be.Shape()
	obsN := games.ObservationSize(g)
	var enc nets.Encoding
	var err error
	if opt.LegalActions {
		if in != obsN+g.NumActions() {
			return nil, fmt.Errorf("engine: backend %s takes %d inputs; with LegalActions it must take %s's %d observation values and %d legal actions",
				be.Name(), in, g.Spec(), obsN, g.NumActions())
		}
	} else if enc, err = nets.EncodingFor(g, in); err != nil {
		return nil, fmt.Errorf("engine: backend %s: %w", be.Name(), err)
	}
	if ps != g.NumActions() {
		return nil, fmt.Errorf("engine: backend %s has %d policy logits, but %s has %d actions",
			be.Name(), ps, g.Spec(), g.NumActions())
	}
	encoder, err := nets.NewEncoder(g, enc)
	if err != nil {
		return nil, fmt.Errorf("engine: backend %s: %w", be.Name(), err)
	}
	vsize := nets.ValueSize(be)
	if vsize > 1 && vsize != g.NumPlayers() {
		return nil, fmt.Errorf("engine: backend %s's network has a value head of %d players, but %s has %d players; use a network made for this player count",
			be.Name(), vsize, g.Spec(), g.NumPlayers())
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Leaves <= 0 {
		opt.Leaves = 1
	}
	if opt.Slots <= 0 {
		opt.Slots = SlotsFor(64, opt.Leaves)
	}
	if opt.Wait == 0 {
		opt.Wait = -1
	}
	e := &Engine{game: g, be: NewTimedBackend(be), opt: opt, inSize: in, polSize: ps, vsize: vsize, enc: encoder, legal: enc.LegalPlane || opt.LegalActions,
		acts: opt.LegalActions, obsN: obsN}
	e.masks.New = func() any { m := games.NewMask(g.NumActions()); return &m }
	bo := batcher.Options{MaxBatch: opt.Batch, Wait: opt.Wait, Slots: opt.Slots, Workers: opt.Consumers}
	if opt.Paced {
		bo.Target = func() int { return int(e.active.Load()) }
		bo.Producers = func() int { return int(e.producers.Load()) }
	}
	b, err := batcher.New(e.be, bo)
	if err != nil {
		return nil, err
	}
	e.b = b
	return e, nil
}

// Close stops the batcher. Requests in flight complete with an error.
func (e *Engine) Close() error { return e.b.Close() }

// Options returns the options with defaults filled in.
func (e *Engine) Options() Options { return e.opt }

// Game is the game the engine evaluates.
func (e *Engine) Game() games.Game { return e.game }

// Encoding is how the engine encodes a state for its network.
func (e *Engine) Encoding() nets.Encoding { return nets.Encoding{LegalPlane: e.legal && !e.acts} }

// encode writes mover's network input for s into row; legal is s's legal
// actions, read only when the encoding has the legal-move plane.
func (e *Engine) encode(s games.State, mover int, legal games.Mask, row []float32) {
	if !e.legal {
		s.Observation(mover, row) // the default path, as fast as before
		return
	}
	if e.acts {
		s.Observation(mover, row[:e.obsN])
		tail := row[e.obsN:]
		clear(tail)
		for a := range legal.All() {
			tail[a] = 1
		}
		return
	}
	e.enc.Encode(s, mover, legal, row)
}

// Backend is the backend behind the batcher (unwrapped).
func (e *Engine) Backend() nets.Backend { return e.be.Backend }

// MaxBatch is the batcher's largest batch.
func (e *Engine) MaxBatch() int { return e.b.MaxBatch() }

// Counters is a snapshot of an engine's work so far.
type Counters struct {
	Nodes, Evals int64         // simulations backed up, network rows
	Batch        batcher.Stats // batch fill and latencies
	Busy         time.Duration // time spent inside the backend
}

// Counters returns the engine's counters.
func (e *Engine) Counters() Counters {
	return Counters{Nodes: e.nodes.Load(), Evals: e.evals.Load(), Batch: e.b.Stats(), Busy: e.be.Busy()}
}

// ValueSize is the network's values per row: 1 for a scalar value head
// (the mover's view), the game's player count for a per-player head
// (nets.Config.ValuePlayers: mover first, seats rotated).
func (e *Engine) ValueSize() int { return e.vsize }

// EvaluateValues is Evaluate for every value the network gives: values
// (len >= ValueSize) receives the row, mover first for a per-player head.
func (e *Engine) EvaluateValues(ctx context.Context, s games.State, mover int, policy, values []float32) error {
	e.running(1)
	defer e.stopped(1)
	var err error
	if e.legal {
		m := e.masks.Get().(*games.Mask)
		games.LegalOf(s, mover, *m)
		err = e.b.EvaluateValues(ctx, func(row []float32) { e.encode(s, mover, *m, row) }, policy, values)
		e.masks.Put(m)
	} else {
		err = e.b.EvaluateValues(ctx, func(row []float32) { s.Observation(mover, row) }, policy, values)
	}
	if err == nil {
		e.evals.Add(1)
	}
	return err
}

// Evaluate evaluates decision state s from mover's view through the
// batch stream and blocks until the result: policy (NumActions logits)
// is written into policy and the value (mover's view, in [-1, 1]) is
// returned. It is safe for concurrent use; concurrent calls share
// batches.
func (e *Engine) Evaluate(ctx context.Context, s games.State, mover int, policy []float32) (float32, error) {
	e.running(1)
	defer e.stopped(1)
	var v float32
	var err error
	if e.legal {
		m := e.masks.Get().(*games.Mask)
		games.LegalOf(s, mover, *m)
		v, err = e.b.Evaluate(ctx, func(row []float32) { e.encode(s, mover, *m, row) }, policy)
		e.masks.Put(m)
	} else {
		v, err = e.b.Evaluate(ctx, func(row []float32) { s.Observation(mover, row) }, policy)
	}
	if err == nil {
		e.evals.Add(1)
	}
	return v, err
}
