package arena

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/canopy-go/canopy/games"
)

// Log is the JSON game log shared by every game: enough to replay a game
// exactly (chance outcomes included) and to check it while replaying.
type Log struct {
	Game    string    `json:"game"`    // game spec, e.g. "tetrislink:players=3"
	Players []string  `json:"players"` // agent spec (or "human") per seat
	Seed    uint64    `json:"seed,omitempty"`
	Moves   []LogMove `json:"moves"`
	// Returns at the end of the game (absent for unfinished games).
	Returns []float64 `json:"returns,omitempty"`
	// Summary of a finished game per seat (absent for unfinished games
	// and in logs written before it existed).
	Summary *LogSummary `json:"summary,omitempty"`
}

// LogSummary is a finished game's summary per seat: the columns the
// studies report for one game.
type LogSummary struct {
	// Ordinals[p] is seat p's finishing position, 1 = best, tied seats
	// sharing the mean of the positions they span (Ordinal).
	Ordinals []float64 `json:"ordinals"`
	// Moves[p] is the number of seat p's decisions and MoveTimeMS[p]
	// their mean wall-clock time in milliseconds; absent when the game's
	// record has no times (e.g. a log rebuilt from moves).
	Moves      []int     `json:"moves,omitempty"`
	MoveTimeMS []float64 `json:"move_time_ms,omitempty"`
}

// LogMove is one applied action. Player is the mover, -1 for chance. At a
// simultaneous node every player's choice is one LogMove with Joint set to
// true; the joint action is applied after the last player's entry.
type LogMove struct {
	Player int    `json:"player"`
	Action string `json:"action"`
	Joint  bool   `json:"joint,omitempty"`
	// Scores after this move, for games implementing games.Scorer.
	Scores []float64 `json:"scores,omitempty"`
}

// LogFromRecord converts a played game into a Log by replaying its actions
// (so scores after every move are filled in).
func LogFromRecord(g games.Game, rec *Record, seed uint64) (*Log, error) {
	l := &Log{Game: g.Spec(), Players: rec.Agents, Seed: seed}
	s := g.NewInitialState()
	scores := make([]float64, g.NumPlayers())
	joint := make([]games.Action, 0, g.NumPlayers())
	for _, a := range rec.Actions {
		p := s.CurrentPlayer()
		if p == games.SimultaneousPlayer {
			i := len(joint)
			joint = append(joint, a)
			m := LogMove{Player: i, Action: s.ActionString(a), Joint: true}
			if len(joint) == g.NumPlayers() {
				s.(games.SimultaneousState).ApplyJoint(joint)
				joint = joint[:0]
				m.Scores = scoresOf(s, scores)
			}
			l.Moves = append(l.Moves, m)
			continue
		}
		m := LogMove{Player: p, Action: s.ActionString(a)}
		s.Apply(a)
		m.Scores = scoresOf(s, scores)
		l.Moves = append(l.Moves, m)
	}
	if s.IsTerminal() {
		l.Returns = make([]float64, g.NumPlayers())
		s.Returns(l.Returns)
		sum := &LogSummary{Ordinals: make([]float64, g.NumPlayers())}
		for p := range sum.Ordinals {
			sum.Ordinals[p] = Ordinal(l.Returns, p)
		}
		if len(rec.Moves) == g.NumPlayers() && len(rec.Think) == g.NumPlayers() {
			sum.Moves = rec.Moves
			sum.MoveTimeMS = make([]float64, g.NumPlayers())
			for p := range sum.MoveTimeMS {
				sum.MoveTimeMS[p] = float64(rec.MoveTime(p).Nanoseconds()) / 1e6
			}
		}
		l.Summary = sum
	}
	return l, nil
}

// Result is the tournament outcome of a finished game's log, with seats
// the agent index per seat. It needs the returns and the summary with its
// times (logs written by Tournament's OnGame through LogFromRecord have
// both); a log read with ReadLog has had them checked against its moves.
func (l *Log) Result(seats []int) (GameResult, error) {
	if l.Returns == nil {
		return GameResult{}, fmt.Errorf("game log: the game is not finished (no returns)")
	}
	if len(seats) != len(l.Returns) {
		return GameResult{}, fmt.Errorf("game log: %d seats for a %d-player game", len(seats), len(l.Returns))
	}
	if sum := l.Summary; sum == nil || len(sum.Moves) != len(seats) || len(sum.MoveTimeMS) != len(seats) {
		return GameResult{}, fmt.Errorf("game log: no summary with %d move counts and times", len(seats))
	}
	r := GameResult{
		Seats: slices.Clone(seats), Returns: slices.Clone(l.Returns),
		Moves: slices.Clone(l.Summary.Moves), Think: make([]float64, len(seats)),
	}
	for p, n := range r.Moves {
		r.Length += n
		r.Think[p] = l.Summary.MoveTimeMS[p] * float64(n) / 1000
	}
	return r, nil
}

// checkSummary checks a log's summary against its replay: ordinals from
// the returns, decision counts from the moves, times finite and >= 0.
func checkSummary(l *Log, n int) error {
	sum := l.Summary
	if l.Returns == nil {
		return fmt.Errorf("game log: a summary but no returns (summaries are for finished games)")
	}
	if len(sum.Ordinals) != n {
		return fmt.Errorf("game log: summary has %d ordinals for %d players", len(sum.Ordinals), n)
	}
	for p, o := range sum.Ordinals {
		if want := Ordinal(l.Returns, p); math.Abs(o-want) > 1e-9 {
			return fmt.Errorf("game log: summary gives player %d ordinal %v, the returns %v give %v", p, o, l.Returns, want)
		}
	}
	if sum.Moves == nil && sum.MoveTimeMS == nil {
		return nil
	}
	if len(sum.Moves) != n || len(sum.MoveTimeMS) != n {
		return fmt.Errorf("game log: summary needs %d move counts and times (got %d and %d)", n, len(sum.Moves), len(sum.MoveTimeMS))
	}
	count := make([]int, n)
	for _, m := range l.Moves {
		if m.Player >= 0 {
			count[m.Player]++
		}
	}
	for p := range n {
		if sum.Moves[p] != count[p] {
			return fmt.Errorf("game log: summary counts %d decisions for player %d, the log has %d", sum.Moves[p], p, count[p])
		}
		if t := sum.MoveTimeMS[p]; !(t >= 0) || math.IsInf(t, 0) {
			return fmt.Errorf("game log: summary time per move of player %d is %v; want a finite number >= 0", p, t)
		}
	}
	return nil
}

func scoresOf(s games.State, buf []float64) []float64 {
	sc, ok := s.(games.Scorer)
	if !ok {
		return nil
	}
	sc.Scores(buf)
	return append([]float64(nil), buf...)
}

// WriteLog writes l as indented JSON.
func WriteLog(w io.Writer, l *Log) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(l)
}

// ReadLog parses a log and replays it, checking every move's legality and
// every recorded score and return. It returns the log and the final state.
func ReadLog(r io.Reader) (*Log, games.State, error) {
	var l Log
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, nil, fmt.Errorf("game log: not valid JSON of the expected form: %v", err)
	}
	g, err := games.New(l.Game)
	if err != nil {
		return nil, nil, fmt.Errorf("game log: %v", err)
	}
	if l.Players != nil && len(l.Players) != g.NumPlayers() {
		return nil, nil, fmt.Errorf("game log: %d players listed, %s has %d", len(l.Players), g.Spec(), g.NumPlayers())
	}
	s, err := Replay(g, l.Moves)
	if err != nil {
		return nil, nil, err
	}
	if l.Returns != nil {
		if !s.IsTerminal() {
			return nil, nil, fmt.Errorf("game log: returns recorded but the game is not over after %d moves", len(l.Moves))
		}
		got := make([]float64, g.NumPlayers())
		s.Returns(got)
		if !closeAll(got, l.Returns) {
			return nil, nil, fmt.Errorf("game log: recorded returns %v, replay gives %v", l.Returns, got)
		}
	}
	if l.Summary != nil {
		if err := checkSummary(&l, g.NumPlayers()); err != nil {
			return nil, nil, err
		}
	}
	return &l, s, nil
}

// Replay applies logged moves from the initial state of g with full checks.
func Replay(g games.Game, moves []LogMove) (games.State, error) {
	s := g.NewInitialState()
	mask := games.NewMask(g.NumActions())
	scores := make([]float64, g.NumPlayers())
	var joint []games.Action
	for i, m := range moves {
		where := fmt.Sprintf("game log: move %d (%q by player %d)", i+1, m.Action, m.Player)
		if s.IsTerminal() {
			return nil, fmt.Errorf("%s: the game is already over", where)
		}
		p := s.CurrentPlayer()
		if p == games.SimultaneousPlayer {
			if !m.Joint || m.Player != len(joint) {
				return nil, fmt.Errorf("%s: expected player %d's part of a joint action", where, len(joint))
			}
			a, err := s.ParseAction(m.Action)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			s.(games.SimultaneousState).LegalFor(m.Player, mask)
			if !mask.Has(a) {
				return nil, fmt.Errorf("%s: illegal for that player", where)
			}
			joint = append(joint, a)
			if len(joint) < g.NumPlayers() {
				if m.Scores != nil {
					return nil, fmt.Errorf("%s: scores recorded before the joint action is complete", where)
				}
				continue
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
			joint = joint[:0]
		} else {
			if m.Player != p || m.Joint {
				return nil, fmt.Errorf("%s: it is player %d's turn", where, p)
			}
			a, err := s.ParseAction(m.Action)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			if err := games.ApplyChecked(s, a); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
		}
		if m.Scores != nil {
			sc, ok := s.(games.Scorer)
			if !ok {
				return nil, fmt.Errorf("%s: scores recorded but %s keeps no score", where, g.Spec())
			}
			sc.Scores(scores)
			if !closeAll(scores, m.Scores) {
				return nil, fmt.Errorf("%s: recorded scores %v, replay gives %v", where, m.Scores, scores)
			}
		}
	}
	if len(joint) > 0 {
		return nil, fmt.Errorf("game log: ends inside a joint action (%d of %d choices)", len(joint), g.NumPlayers())
	}
	return s, nil
}

func closeAll(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}
