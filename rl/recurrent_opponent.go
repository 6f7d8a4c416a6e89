package rl

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// RecurrentOpponent plays a recurrent net's masked policy (study 000's
// CNN-LSTM, temperature 1) on the game's feature encoding, seeing the
// board from its own seat. It is a BatchOpponent: a VecEnv gathers its
// moves across environments into one nets.Recurrent.Step, and it keeps
// an LSTM state per environment index and seat, zeroed at its first move
// of every game in that seat (OpponentMove.First) and carried through
// the rest of that game; the learner's state, and any other opponent's,
// is separate.
//
// It serves the environments of one VecEnv (states are kept by
// environment index) and is not safe for concurrent use; a VecEnv calls
// it from one goroutine at a time.
type RecurrentOpponent struct {
	Net  *nets.Recurrent
	game games.Game
	enc  *nets.Encoder
	// h and c hold the LSTM state of each environment and seat (slot
	// env*players+seat, Hidden values each, grown on demand) after the
	// opponent's last move there.
	h, c    []float32
	players int
	// Batch scratch.
	obs, hb, cb, logits, values, probs []float32
	reset                              []bool
}

// NewRecurrentOpponent returns an opponent that plays net's policy in g.
func NewRecurrentOpponent(g games.Game, net *nets.Recurrent) (*RecurrentOpponent, error) {
	if g == nil || net == nil {
		return nil, errors.New("rl: NewRecurrentOpponent needs a game and a net")
	}
	enc, err := nets.NewEncoder(g, nets.Encoding{Features: true})
	if err != nil {
		return nil, err
	}
	if net.InputSize() != enc.Size() || net.PolicySize() != g.NumActions() {
		return nil, fmt.Errorf("rl: recurrent net takes %d inputs and gives %d logits; game %s has %d-value features and %d actions",
			net.InputSize(), net.PolicySize(), g.Spec(), enc.Size(), g.NumActions())
	}
	return &RecurrentOpponent{Net: net, game: g, enc: enc, players: g.NumPlayers(), probs: make([]float32, g.NumActions())}, nil
}

// Act implements Opponent. A RecurrentOpponent needs to know whose game
// it plays: it moves only through ActBatch, inside a VecEnv.
func (o *RecurrentOpponent) Act(games.State, int, games.Mask, *rand.Rand) (games.Action, error) {
	return games.NoAction, errors.New("rl: a recurrent opponent plays inside a VecEnv only (ActBatch)")
}

// ActBatch implements BatchOpponent: one Step of the net for all moves,
// each from its environment's state.
func (o *RecurrentOpponent) ActBatch(moves []OpponentMove) error {
	B := len(moves)
	if B == 0 {
		return nil
	}
	H, O, P := o.Net.Hidden(), o.enc.Size(), o.Net.PolicySize()
	maxSlot := 0
	for _, m := range moves {
		if m.Player < 0 || m.Player >= o.players || m.Env < 0 {
			return fmt.Errorf("rl: recurrent opponent asked to move for player %d in environment %d of a %d-player game", m.Player, m.Env, o.players)
		}
		maxSlot = max(maxSlot, o.slot(m.Env, m.Player))
	}
	if need := (maxSlot + 1) * H; len(o.h) < need {
		o.h = append(o.h, make([]float32, need-len(o.h))...)
		o.c = append(o.c, make([]float32, need-len(o.c))...)
	}
	if len(o.reset) < B {
		o.obs, o.logits, o.values = make([]float32, B*O), make([]float32, B*P), make([]float32, B)
		o.hb, o.cb, o.reset = make([]float32, B*H), make([]float32, B*H), make([]bool, B)
	}
	for j, m := range moves {
		o.enc.Encode(m.State, m.Player, m.Legal, o.obs[j*O:(j+1)*O])
		k := o.slot(m.Env, m.Player)
		copy(o.hb[j*H:(j+1)*H], o.h[k*H:(k+1)*H])
		copy(o.cb[j*H:(j+1)*H], o.c[k*H:(k+1)*H])
		o.reset[j] = m.First
	}
	if err := o.Net.Step(B, o.obs, o.hb, o.cb, o.reset[:B], o.logits, o.values); err != nil {
		return err
	}
	for j := range moves {
		m := &moves[j]
		k := o.slot(m.Env, m.Player)
		copy(o.h[k*H:(k+1)*H], o.hb[j*H:(j+1)*H])
		copy(o.c[k*H:(k+1)*H], o.cb[j*H:(j+1)*H])
		if !nets.MaskedSoftmax(o.logits[j*P:(j+1)*P], m.Legal, o.probs) {
			return fmt.Errorf("rl: the recurrent opponent's policy is not finite on %s", m.State)
		}
		m.Action = sample(o.probs, m.Legal, m.Rng)
	}
	return nil
}

// slot is the index of the state of env's seat player.
func (o *RecurrentOpponent) slot(env, player int) int { return env*o.players + player }

// State returns a copy of the LSTM state the opponent holds for seat
// player of environment env (zeros before its first move there).
func (o *RecurrentOpponent) State(env, player int) (h, c []float32) {
	H := o.Net.Hidden()
	h, c = make([]float32, H), make([]float32, H)
	if k := o.slot(env, player); player >= 0 && player < o.players && (k+1)*H <= len(o.h) {
		copy(h, o.h[k*H:(k+1)*H])
		copy(c, o.c[k*H:(k+1)*H])
	}
	return h, c
}
