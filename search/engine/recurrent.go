package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// RecurrentPolicy is the `policy` agent for a recurrent net (study 000's
// CNN-LSTM, nets.Recurrent): one step of the net per move it makes, on
// the game's feature encoding, with the LSTM state carried from move to
// move as in training (where the net also steps once per learner
// decision and sees the opponents' moves only through the next
// observation). The state starts at zero and is reset when a new game
// begins, which it recognises by a move number no larger than that of its
// previous move (arenas also build one agent per game). It runs on the
// CPU with a net of its own (no batching with other agents).
//
// A RecurrentPolicy is not safe for concurrent use.
type RecurrentPolicy struct {
	net      *nets.Recurrent
	temp     float64
	rng      *rand.Rand
	h, c     []float32 // the LSTM state after the agent's last move
	hx, cx   []float32 // scratch state of Analyze, which must not advance h, c
	in       []float32
	logits   []float32
	probs    []float32
	value    []float32
	mask     games.Mask
	lastMove int // move number of the last Act; -1 before the first
}

// openRecurrent returns the recurrent net in the weights file ref, or nil
// when ref is not a file or holds a plain net.
func openRecurrent(ref string) (*nets.Recurrent, error) {
	buf, err := os.ReadFile(ref)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !nets.IsRecurrentFile(buf)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("network %q: %v", ref, err)
	}
	net, _, err := nets.DecodeRecurrent(buf)
	if err != nil {
		return nil, fmt.Errorf("network %s: %v", ref, err)
	}
	return net, nil
}

// NewRecurrentPolicy returns a policy agent for g on the recurrent net;
// temp 0 plays the most probable legal action.
func NewRecurrentPolicy(g games.Game, net *nets.Recurrent, temp float64, seed uint64) (*RecurrentPolicy, error) {
	fg, ok := g.(nets.FeatureGame)
	if !ok {
		return nil, fmt.Errorf("policy: game %s has no feature encoding, which the recurrent net reads", g.Spec())
	}
	if net.InputSize() != fg.FeatureSize() || net.PolicySize() != g.NumActions() {
		return nil, fmt.Errorf("policy: the recurrent net (for %s) takes %d inputs and gives %d logits; %s has %d features and %d actions",
			net.Config().Game, net.InputSize(), net.PolicySize(), g.Spec(), fg.FeatureSize(), g.NumActions())
	}
	H, n := net.Hidden(), g.NumActions()
	net.Reserve(1, 1)
	return &RecurrentPolicy{net: net, temp: temp, rng: games.NewRand(seed),
		h: make([]float32, H), c: make([]float32, H), hx: make([]float32, H), cx: make([]float32, H),
		in: make([]float32, net.InputSize()), logits: make([]float32, n), probs: make([]float32, n), value: make([]float32, 1),
		mask: games.NewMask(n), lastMove: -1}, nil
}

// eval steps the net on s from state (h, c), updated in place, and leaves
// the masked policy in a.probs.
func (a *RecurrentPolicy) eval(s games.State, player int, h, c []float32) error {
	if s.IsTerminal() || s.CurrentPlayer() != player {
		return fmt.Errorf("policy: player %d is not to move", player)
	}
	fs, ok := s.(nets.FeatureState)
	if !ok {
		return fmt.Errorf("policy: state %s has no feature encoding", s)
	}
	fs.Features(player, a.in)
	if err := a.net.Step(1, a.in, h, c, nil, a.logits, a.value); err != nil {
		return err
	}
	s.Legal(a.mask)
	if !nets.MaskedSoftmax(a.logits, a.mask, a.probs) {
		return fmt.Errorf("policy: the network's policy is not finite on %s", s)
	}
	return nil
}

// Act implements agent.Agent: it advances the LSTM state by this move.
func (a *RecurrentPolicy) Act(_ context.Context, s games.State, player int) (games.Action, error) {
	if m := s.MoveNumber(); m <= a.lastMove {
		clear(a.h) // a new game
		clear(a.c)
	}
	if err := a.eval(s, player, a.h, a.c); err != nil {
		return games.NoAction, err
	}
	a.lastMove = s.MoveNumber()
	return choosePolicyAction(a.mask, a.probs, a.temp, a.rng), nil
}

// Analyze implements agent.Analyzer: the policy per legal action from the
// current LSTM state, which it does not advance; Q is the net's value.
func (a *RecurrentPolicy) Analyze(_ context.Context, s games.State, player int) ([]agent.Analysis, error) {
	copy(a.hx, a.h)
	copy(a.cx, a.c)
	if s.MoveNumber() <= a.lastMove {
		clear(a.hx)
		clear(a.cx)
	}
	if err := a.eval(s, player, a.hx, a.cx); err != nil {
		return nil, err
	}
	var out []agent.Analysis
	for act := range a.mask.All() {
		out = append(out, agent.Analysis{Action: act, Q: float64(a.value[0]), Prior: float64(a.probs[act])})
	}
	sortByPrior(out)
	return out, nil
}

// Close implements io.Closer (nothing to release).
func (a *RecurrentPolicy) Close() error { return nil }
