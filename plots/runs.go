package plots

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/rl"
)

// File names in run directories. zero's names are spelled out here (zero
// imports this package); zero's tests check that they agree.
const (
	ZeroConfigFile = "zero.json"     // zero.ConfigName
	MetricsFile    = "metrics.jsonl" // zero's and rl's
)

// MaxInputBytes bounds every file this package reads from a run
// directory or a log file.
const MaxInputBytes = 64 << 20

// Interval is a value with its 95% interval, Lo <= Value <= Hi.
type Interval struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// Loss is a training loss and its terms.
type Loss struct {
	Total  float64 `json:"total"`
	Policy float64 `json:"policy"`
	Value  float64 `json:"value"`
	L2     float64 `json:"l2"`
}

// Iteration is what the charts use of one line of zero's metrics.jsonl
// (zero.Record).
type Iteration struct {
	Iteration int
	Loss      Loss // the training's final loss (its last steps)
	// HeldOut is the policy and value loss of the previous network on the
	// iteration's new positions before training (nil where not recorded).
	HeldOut *Loss
	Elo     *Interval // rolling Elo, iteration 0 = 0; nil before any evaluation
	// Solver set (connect4): shares of optimal moves in [0,1] for the
	// network alone, with search, and for uniformly random moves; nil
	// where not measured.
	SolverPolicy, SolverSearch, SolverRandom *float64
	// Scores are the searching network's scores against each opponent of
	// the iteration's evaluation (the previous network first), Alone the
	// network's without search against each baseline; shares in [0,1].
	Scores, Alone []Score
}

// Score is a share of the points against one opponent, with its 95%
// interval.
type Score struct {
	Opponent string
	Interval
}

// zeroScore is a zero.Score as metrics.jsonl holds it.
type zeroScore struct {
	Opponent string  `json:"opponent"`
	Score    float64 `json:"score"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
}

func scoresOf(zs []zeroScore) []Score {
	var out []Score
	for _, z := range zs {
		out = append(out, Score{z.Opponent, Interval{z.Score, z.Lo, z.Hi}})
	}
	return out
}

// zeroLine is the part of a zero.Record the charts read.
type zeroLine struct {
	Iteration *int `json:"iteration"`
	Train     struct {
		FinalLoss *struct{ Total, Policy, Value, L2 float64 } `json:"final_loss"`
		HeldOut   *struct{ Total, Policy, Value, L2 float64 } `json:"held_out"`
	} `json:"train"`
	Eval struct {
		SolverPolicy *float64    `json:"solver_policy"`
		SolverSearch *float64    `json:"solver_search"`
		SolverRandom *float64    `json:"solver_random"`
		Scores       []zeroScore `json:"scores"`
		Alone        []zeroScore `json:"alone"`
	} `json:"eval"`
	Elo *Interval `json:"elo"`
}

// ParseZeroMetrics parses zero's metrics.jsonl (file names it in errors).
// Every line must be a record with an iteration number above the previous
// line's, a final loss, finite numbers, shares in [0,1] and Elo intervals
// that contain their value.
func ParseZeroMetrics(data []byte, file string) ([]Iteration, error) {
	var out []Iteration
	for i, line := range lines(data) {
		n := i + 1
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var z zeroLine
		if err := json.Unmarshal(line, &z); err != nil {
			return nil, inputErrorf(file, n, "not a JSON metrics record: %v", err)
		}
		if z.Iteration == nil {
			return nil, inputErrorf(file, n, "no \"iteration\" field (is this zero's metrics.jsonl?)")
		}
		if z.Train.FinalLoss == nil {
			return nil, inputErrorf(file, n, "no \"train.final_loss\" field (is this zero's metrics.jsonl?)")
		}
		it := Iteration{Iteration: *z.Iteration, Elo: z.Elo,
			Loss:         Loss{z.Train.FinalLoss.Total, z.Train.FinalLoss.Policy, z.Train.FinalLoss.Value, z.Train.FinalLoss.L2},
			SolverPolicy: z.Eval.SolverPolicy, SolverSearch: z.Eval.SolverSearch, SolverRandom: z.Eval.SolverRandom,
			Scores: scoresOf(z.Eval.Scores), Alone: scoresOf(z.Eval.Alone)}
		if h := z.Train.HeldOut; h != nil {
			it.HeldOut = &Loss{h.Total, h.Policy, h.Value, h.L2}
		}
		if len(out) > 0 && it.Iteration <= out[len(out)-1].Iteration {
			return nil, inputErrorf(file, n, "iteration %d after iteration %d: want increasing iterations", it.Iteration, out[len(out)-1].Iteration)
		}
		if err := it.check(); err != nil {
			return nil, &InputError{File: file, Line: n, Err: err}
		}
		out = append(out, it)
	}
	return out, nil
}

func (it Iteration) check() error {
	if it.Iteration < 1 {
		return fmt.Errorf("iteration %d: want 1 or more", it.Iteration)
	}
	vs := []float64{it.Loss.Total, it.Loss.Policy, it.Loss.Value, it.Loss.L2}
	if h := it.HeldOut; h != nil {
		vs = append(vs, h.Total, h.Policy, h.Value, h.L2)
	}
	for _, v := range vs {
		if !finite(v) {
			return fmt.Errorf("iteration %d: loss %v is not a finite number", it.Iteration, v)
		}
	}
	if e := it.Elo; e != nil && !(finite(e.Lo) && finite(e.Hi) && e.Lo <= e.Value && e.Value <= e.Hi) {
		return fmt.Errorf("iteration %d: Elo %v outside its interval [%v, %v]", it.Iteration, e.Value, e.Lo, e.Hi)
	}
	for _, p := range []*float64{it.SolverPolicy, it.SolverSearch, it.SolverRandom} {
		if p != nil && !(*p >= 0 && *p <= 1) {
			return fmt.Errorf("iteration %d: solver share %v outside [0, 1]", it.Iteration, *p)
		}
	}
	for _, sc := range append(append([]Score(nil), it.Scores...), it.Alone...) {
		if v := sc.Interval; !(v.Lo >= 0 && v.Hi <= 1 && v.Lo <= v.Value && v.Value <= v.Hi) {
			return fmt.Errorf("iteration %d: score %v against %q outside [0, 1] or its interval [%v, %v]", it.Iteration, v.Value, sc.Opponent, v.Lo, v.Hi)
		}
	}
	if (it.SolverPolicy == nil) != (it.SolverSearch == nil) {
		return fmt.Errorf("iteration %d: solver_policy and solver_search must come together", it.Iteration)
	}
	return nil
}

// ZeroFigures draws zero's charts: "loss" (final loss and its terms,
// policy, value and L2, per iteration, and the held-out policy and value
// loss where recorded), "elo" (rolling Elo with 95% intervals, iteration 0 = 0)
// when any iteration has one, "scores" (the score against each baseline,
// with search and, where measured, without, with 95% intervals) when any
// iteration played a baseline, and "solver" when any iteration was scored
// on the solver set.
func ZeroFigures(game string, its []Iteration) []*Figure {
	if len(its) == 0 {
		return nil
	}
	var tot, pol, val, l2, hPol, hVal Series
	tot.Name, pol.Name, val.Name, l2.Name = "total", "policy", "value", "l2"
	hPol.Name, hVal.Name = "policy, held out", "value, held out"
	elo := Series{Name: "network", X: []float64{0}, Y: []float64{0}, Lo: []float64{0}, Hi: []float64{0}}
	solP := Series{Name: "network alone"}
	solS := Series{Name: "with search"}
	solR := Series{Name: "random moves"}
	add := func(s *Series, x, y float64) { s.X, s.Y = append(s.X, x), append(s.Y, y) }
	hasElo := false
	for _, it := range its {
		x := float64(it.Iteration)
		add(&tot, x, it.Loss.Total)
		add(&pol, x, it.Loss.Policy)
		add(&val, x, it.Loss.Value)
		add(&l2, x, it.Loss.L2)
		if h := it.HeldOut; h != nil {
			add(&hPol, x, h.Policy)
			add(&hVal, x, h.Value)
		}
		if e := it.Elo; e != nil {
			hasElo = true
			add(&elo, x, e.Value)
			elo.Lo, elo.Hi = append(elo.Lo, e.Lo), append(elo.Hi, e.Hi)
		}
		if it.SolverPolicy != nil {
			add(&solP, x, 100**it.SolverPolicy)
			add(&solS, x, 100**it.SolverSearch)
			if it.SolverRandom != nil {
				add(&solR, x, 100**it.SolverRandom)
			}
		}
	}
	loss := []Series{tot, pol, val, l2}
	if len(hPol.X) > 0 {
		loss = append(loss, hPol, hVal)
	}
	figs := []*Figure{lineFigure("loss", game+": training loss\nlast steps of each iteration; held out: previous network, new games", "iteration", "loss",
		loss)}
	if hasElo {
		figs = append(figs, lineFigure("elo", game+": Elo rating\nover all evaluation games, iteration 0 = 0, with 95% intervals",
			"iteration", "Elo", []Series{elo}))
	}
	if sc := scoreSeries(its); len(sc) > 0 {
		figs = append(figs, lineFigure("scores", game+": score against the baselines\nwith 95% intervals; alone: the network without search",
			"iteration", "% of the points", sc))
	}
	if len(solP.X) > 0 {
		figs = append(figs, lineFigure("solver", game+": optimal moves\non the solver-labelled positions", "iteration", "% optimal",
			[]Series{solP, solS, solR}))
	}
	return figs
}

// scoreSeries returns, per baseline opponent in the order first met, the
// series of the searching network's scores in percent and then those of
// the network alone. The previous network (an opponent named iter-NNNN)
// changes every iteration and is left out.
func scoreSeries(its []Iteration) []Series {
	var order []string
	search, alone := map[string]*Series{}, map[string]*Series{}
	add := func(m map[string]*Series, name string, x float64, sc Score) {
		s := m[sc.Opponent]
		if s == nil {
			s = &Series{Name: name}
			m[sc.Opponent] = s
			if !slices.Contains(order, sc.Opponent) {
				order = append(order, sc.Opponent)
			}
		}
		s.X, s.Y = append(s.X, x), append(s.Y, 100*sc.Value)
		s.Lo, s.Hi = append(s.Lo, 100*sc.Lo), append(s.Hi, 100*sc.Hi)
	}
	for _, it := range its {
		x := float64(it.Iteration)
		for _, sc := range it.Scores {
			if !isIteration(sc.Opponent) {
				add(search, "vs "+sc.Opponent, x, sc)
			}
		}
		for _, sc := range it.Alone {
			add(alone, "alone vs "+sc.Opponent, x, sc)
		}
	}
	var out []Series
	for _, o := range order {
		for _, m := range []map[string]*Series{search, alone} {
			if s := m[o]; s != nil {
				out = append(out, *s)
			}
		}
	}
	return out
}

// isIteration reports whether name is a network of the run (iter-NNNN).
func isIteration(name string) bool {
	var n int
	k, err := fmt.Sscanf(name, "iter-%d", &n)
	return k == 1 && err == nil && len(name) == len("iter-")+4
}

// ParsePPOMetrics parses the metrics.jsonl of `canopy ppo` (rl.Metrics
// lines). A last line without its newline that does not parse (cut short
// by a crash: rl appends to the file) is left out; any other bad line is
// an error.
func ParsePPOMetrics(data []byte, file string) ([]rl.Metrics, error) {
	var out []rl.Metrics
	ls := lines(data)
	for i, line := range ls {
		n := i + 1
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m rl.Metrics
		if err := json.Unmarshal(line, &m); err != nil {
			if n == len(ls) { // the last line, cut short (a complete one ends with a newline)
				break
			}
			return nil, inputErrorf(file, n, "not a JSON PPO metrics record: %v", err)
		}
		switch {
		case m.Update < 1:
			return nil, inputErrorf(file, n, "update %d: want 1 or more (is this the metrics.jsonl of canopy ppo?)", m.Update)
		case len(out) > 0 && m.Update <= out[len(out)-1].Update:
			return nil, inputErrorf(file, n, "update %d after update %d: want increasing updates", m.Update, out[len(out)-1].Update)
		case m.Episodes < 0 || m.Wins < 0 || m.Draws < 0 || m.Losses < 0 || m.Wins+m.Draws+m.Losses > m.Episodes:
			return nil, inputErrorf(file, n, "update %d: %d wins, %d draws and %d losses do not fit %d episodes", m.Update, m.Wins, m.Draws, m.Losses, m.Episodes)
		}
		for _, v := range []float64{m.Loss, m.PolicyLoss, m.ValueLoss, m.Entropy} {
			if !finite(v) {
				return nil, inputErrorf(file, n, "update %d: loss term %v is not a finite number", m.Update, v)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// PPOFigures draws a PPO run's charts: "loss" (loss, policy and value
// loss, entropy per update) and "winrate" (share of the episodes that
// ended during each update won against the opponent, with 95% Wilson
// intervals; updates without episodes are left out).
func PPOFigures(game, opponent string, ms []rl.Metrics) []*Figure {
	if len(ms) == 0 {
		return nil
	}
	tot, pol, val, ent := Series{Name: "loss"}, Series{Name: "policy"}, Series{Name: "value"}, Series{Name: "entropy"}
	win := Series{Name: "wins", Lo: []float64{}, Hi: []float64{}}
	for _, m := range ms {
		x := float64(m.Update)
		for _, p := range []struct {
			s *Series
			v float64
		}{{&tot, m.Loss}, {&pol, m.PolicyLoss}, {&val, m.ValueLoss}, {&ent, m.Entropy}} {
			p.s.X, p.s.Y = append(p.s.X, x), append(p.s.Y, p.v)
		}
		if m.Episodes > 0 {
			w := arena.Wilson(float64(m.Wins), int(m.Episodes))
			win.X, win.Y = append(win.X, x), append(win.Y, 100*w.Value)
			win.Lo, win.Hi = append(win.Lo, 100*w.Lo), append(win.Hi, 100*w.Hi)
		}
	}
	figs := []*Figure{lineFigure("loss", game+": PPO loss\nper update", "update", "loss", []Series{tot, pol, val, ent})}
	if len(win.X) > 0 {
		figs = append(figs, lineFigure("winrate", fmt.Sprintf("%s: games won against %s\nper update, with 95%% Wilson intervals", game, opponent),
			"update", "% won", []Series{win}))
	}
	return figs
}

// Run is a run directory's metrics.
type Run struct {
	Kind     string // "zero" or "ppo"
	Game     string
	Opponent string       // PPO runs: the opponent's agent spec
	Zero     []Iteration  // Kind "zero"
	PPO      []rl.Metrics // Kind "ppo"
}

// ReadRun reads the run directory fsys, named dir in errors: zero's
// (zero.json) or a PPO run's (ppo.json), and its metrics.jsonl (none yet
// is no error). A directory with neither configuration is an error for
// which errors.Is(err, fs.ErrNotExist) holds.
func ReadRun(fsys fs.FS, dir string) (*Run, error) {
	var cfg struct {
		Game     string `json:"game"`
		Opponent string `json:"opponent"`
	}
	r := &Run{}
	for _, c := range []struct{ kind, file string }{{"zero", ZeroConfigFile}, {"ppo", rl.ConfigFile}} {
		data, err := readLimited(fsys, c.file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", dir, c.file, err)
		}
		if err := json.Unmarshal(data, &cfg); err != nil || cfg.Game == "" {
			if err == nil {
				err = errors.New("no \"game\" field")
			}
			return nil, &InputError{File: dir + "/" + c.file, Err: fmt.Errorf("not a run configuration: %v", err)}
		}
		r.Kind, r.Game, r.Opponent = c.kind, cfg.Game, cfg.Opponent
		break
	}
	if r.Kind == "" {
		return nil, fmt.Errorf("%s: neither %s (canopy zero) nor %s (canopy ppo): not a run directory: %w", dir, ZeroConfigFile, rl.ConfigFile, fs.ErrNotExist)
	}
	data, err := readLimited(fsys, MetricsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", dir, MetricsFile, err)
	}
	name := dir + "/" + MetricsFile
	if r.Kind == "zero" {
		r.Zero, err = ParseZeroMetrics(data, name)
	} else {
		r.PPO, err = ParsePPOMetrics(data, name)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Figures draws the run's charts (none before its first metrics line).
func (r *Run) Figures() []*Figure {
	if r.Kind == "zero" {
		return ZeroFigures(r.Game, r.Zero)
	}
	return PPOFigures(r.Game, r.Opponent, r.PPO)
}

// Len is the number of metrics lines read.
func (r *Run) Len() int { return len(r.Zero) + len(r.PPO) }

// readLimited reads name from fsys, refusing what is not a regular file
// or is over MaxInputBytes.
func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxInputBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("over %d bytes", MaxInputBytes)
	}
	return data, nil
}

// lines returns data's lines without their newlines; line i+1 is
// element i. Data ending with a newline has an empty last element.
func lines(data []byte) [][]byte { return bytes.Split(data, []byte{'\n'}) }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
