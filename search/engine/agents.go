package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/spec"
)

// netOptions are the options every network agent takes.
type netOptions struct {
	Net, Backend string
}

func (n *netOptions) table() spec.Table {
	return spec.Table{
		spec.File("net", &n.Net, "default", "network: default (the game's shipped network, else init), a .safetensors weights file, a shipped name, or init (random weights)"),
		spec.String("backend", &n.Backend, "auto", "backend spec: auto, cpu, cuda, ort, random (options with commas go in the command's --backend)"),
	}
}

// azOptions are the `az` agent's options.
type azOptions struct {
	netOptions
	Settings
	Reuse bool
}

func (o *azOptions) table() spec.Table {
	t := o.netOptions.table()
	t = append(t, o.Settings.Table()...)
	return append(t, spec.Bool("reuse", &o.Reuse, false, "reuse the subtree of the position reached between moves"))
}

// policyOptions are the `policy` agent's options.
type policyOptions struct {
	netOptions
	Temp float64
}

func (o *policyOptions) table() spec.Table {
	t := o.netOptions.table()
	return append(t, spec.Float("temp", &o.Temp, 0, 0, 100, "0: play the most probable legal action; > 0: sample from the policy^(1/temp)"))
}

func init() {
	var az azOptions
	agent.Register(agent.Registration{
		Name:    "az",
		Summary: "AlphaZero: PUCT search with network priors and values, batched with every other network agent on the same net",
		Options: agent.OptionsOf(az.table()),
		New: func(g games.Game, s *spec.Spec, env agent.Env) (agent.Agent, error) {
			var o azOptions
			if err := o.table().Parse(s); err != nil {
				return nil, err
			}
			return NewAZ(PoolOf(env), g, o.Net, o.Backend, o.Settings, o.Reuse, env.Seed)
		},
	})
	var po policyOptions
	agent.Register(agent.Registration{
		Name:    "policy",
		Summary: "the network alone: the most probable legal action (or sampled with temp > 0), no search; a recurrent net keeps its LSTM state across the game",
		Options: agent.OptionsOf(po.table()),
		New: func(g games.Game, s *spec.Spec, env agent.Env) (agent.Agent, error) {
			seed := env.Seed
			var o policyOptions
			if err := o.table().Parse(s); err != nil {
				return nil, err
			}
			// A recurrent net (study 000's CNN-LSTM) keeps its state
			// across the game: it plays through RecurrentPolicy.
			if rec, err := openRecurrent(o.Net); rec != nil || err != nil {
				if err != nil {
					return nil, err
				}
				return NewRecurrentPolicy(g, rec, o.Temp, seed)
			}
			return NewPolicy(PoolOf(env), g, o.Net, o.Backend, o.Temp, seed)
		},
	})
}

// AZ is the `az` agent: a Searcher over a pooled engine. It is not safe
// for concurrent use; Close releases its engine.
type AZ struct {
	lease *Lease
	s     *Searcher
	stats []search.ActionStat

	// The statistics of the last Analyze, consumed by an Act on the same
	// position right after it, so that the move matches the analysis.
	analyzed []search.ActionStat
	anKey    [3]uint64
}

// NewAZ returns an az agent for g on network netRef and backend, on an
// engine of pool p.
func NewAZ(p *Pool, g games.Game, netRef, backend string, st Settings, reuse bool, seed uint64) (*AZ, error) {
	l, err := p.Acquire(g, netRef, backend)
	if err != nil {
		return nil, err
	}
	o := st.SearchOptions()
	o.Search.Reuse = reuse
	s, err := NewSearcher(l.Engine, o, seed)
	if err != nil {
		l.Release()
		return nil, err
	}
	return &AZ{lease: l, s: s}, nil
}

// Source is the agent's network.
func (a *AZ) Source() nets.Source { return a.lease.Source }

// Close releases the agent's engine.
func (a *AZ) Close() error { a.lease.Release(); return nil }

// Act implements agent.Agent.
func (a *AZ) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	st := a.analyzed
	a.analyzed = nil
	if st == nil || a.anKey != [3]uint64{s.Hash(), uint64(s.MoveNumber()), uint64(player)} {
		var err error
		if st, err = a.s.Search(ctx, s, player); err != nil {
			return games.NoAction, err
		}
	}
	if len(st) == 0 {
		return games.NoAction, fmt.Errorf("az: no legal action for player %d", player)
	}
	return a.s.Choose(st, s.MoveNumber()), nil
}

// Analyze implements agent.Analyzer: visits, Q and prior per action.
func (a *AZ) Analyze(ctx context.Context, s games.State, player int) ([]agent.Analysis, error) {
	st, err := a.s.Search(ctx, s, player)
	if err != nil {
		return nil, err
	}
	a.stats = append(a.stats[:0], st...)
	a.analyzed, a.anKey = a.stats, [3]uint64{s.Hash(), uint64(s.MoveNumber()), uint64(player)}
	out := make([]agent.Analysis, len(st))
	for i, x := range st {
		out[i] = agent.Analysis{Action: x.Action, Visits: x.Visits, Q: x.Q, Prior: float64(x.Prior)}
	}
	return out, nil
}

// SeatValues returns every player's value of the root of the last
// search (Act, Analyze): the mean of the value vectors it backed up, in
// [-1, 1], seat order (Searcher.RootValues). It is nil before a search
// and for networks without a per-player value head, or under
// backup=paranoid, whose vectors only spread the mover's value. The
// slice is reused by the next call.
func (a *AZ) SeatValues() []float64 {
	if a.lease.vsize < 2 || a.s.opt.Backup == BackupParanoid {
		return nil
	}
	return a.s.RootValues()
}

// Policy is the `policy` agent: one network evaluation per move. It is
// not safe for concurrent use; Close releases its engine.
type Policy struct {
	lease  *Lease
	temp   float64
	rng    *rand.Rand
	logits []float32
	probs  []float32
	mask   games.Mask
	values []float32 // a per-player head's row (mover first)
	seats  []float64 // it by seat (SeatValues); nil for a scalar head
}

// NewPolicy returns a policy agent for g on network netRef and backend;
// temp 0 plays the most probable legal action. Its engine is one of pool
// p.
func NewPolicy(p *Pool, g games.Game, netRef, backend string, temp float64, seed uint64) (*Policy, error) {
	l, err := p.Acquire(g, netRef, backend)
	if err != nil {
		return nil, err
	}
	n := g.NumActions()
	return &Policy{lease: l, temp: temp, rng: games.NewRand(seed), logits: make([]float32, n), probs: make([]float32, n), mask: games.NewMask(n)}, nil
}

// Close releases the agent's engine.
func (a *Policy) Close() error { a.lease.Release(); return nil }

// Source is the agent's network.
func (a *Policy) Source() nets.Source { return a.lease.Source }

func (a *Policy) eval(ctx context.Context, s games.State, player int) (float32, error) {
	p := s.CurrentPlayer()
	if s.IsTerminal() || p != player && !(p == games.SimultaneousPlayer && player >= 0 && player < a.lease.game.NumPlayers()) {
		return 0, fmt.Errorf("policy: player %d is not to move", player)
	}
	var v float32
	var err error
	a.seats = nil
	if vs := a.lease.ValueSize(); vs > 1 {
		a.values = slices.Grow(a.values[:0], vs)[:vs]
		if err = a.lease.EvaluateValues(ctx, s, player, a.logits, a.values); err == nil {
			v, a.seats = a.values[0], nets.SeatValues(a.values, player)
		}
	} else {
		v, err = a.lease.Evaluate(ctx, s, player, a.logits)
	}
	if err != nil {
		return 0, err
	}
	games.LegalOf(s, player, a.mask)
	if !nets.MaskedSoftmax(a.logits, a.mask, a.probs) {
		return 0, fmt.Errorf("policy: the network's policy is not finite on %s", s)
	}
	return v, nil
}

// Act implements agent.Agent.
func (a *Policy) Act(ctx context.Context, s games.State, player int) (games.Action, error) {
	if _, err := a.eval(ctx, s, player); err != nil {
		return games.NoAction, err
	}
	return choosePolicyAction(a.mask, a.probs, a.temp, a.rng), nil
}

// choosePolicyAction returns the most probable legal action of probs
// (temp 0; ties to the lowest action) or one sampled from probs^(1/temp)
// over the legal actions.
func choosePolicyAction(mask games.Mask, probs []float32, temp float64, rng *rand.Rand) games.Action {
	if temp == 0 {
		best := games.NoAction
		for act := range mask.All() {
			if best == games.NoAction || probs[act] > probs[best] {
				best = act
			}
		}
		return best
	}
	var sum float64
	for act := range mask.All() {
		sum += math.Pow(float64(probs[act]), 1/temp)
	}
	x := rng.Float64() * sum
	last := games.NoAction
	for act := range mask.All() {
		x -= math.Pow(float64(probs[act]), 1/temp)
		last = act
		if x < 0 {
			break
		}
	}
	return last
}

// Analyze implements agent.Analyzer: the policy per legal action. The
// network values positions, not actions: Q is NaN on every row, and
// Evaluate gives the position's value.
func (a *Policy) Analyze(ctx context.Context, s games.State, player int) ([]agent.Analysis, error) {
	if _, err := a.eval(ctx, s, player); err != nil {
		return nil, err
	}
	var out []agent.Analysis
	for act := range a.mask.All() {
		out = append(out, agent.Analysis{Action: act, Q: math.NaN(), Prior: float64(a.probs[act])})
	}
	sortByPrior(out)
	return out, nil
}

// Evaluate implements agent.Evaluator: the network's value of the
// position for player.
func (a *Policy) Evaluate(ctx context.Context, s games.State, player int) (float64, error) {
	v, err := a.eval(ctx, s, player)
	return float64(v), err
}

// SeatValues implements agent.SeatValuer: every player's value of the
// position of the last Act, Analyze or Evaluate, by seat, from a network
// with a per-player value head; nil for a scalar head.
func (a *Policy) SeatValues() []float64 { return a.seats }

func sortByPrior(r []agent.Analysis) {
	for i := 1; i < len(r); i++ {
		for j := i; j > 0 && r[j].Prior > r[j-1].Prior; j-- {
			r[j], r[j-1] = r[j-1], r[j]
		}
	}
}
