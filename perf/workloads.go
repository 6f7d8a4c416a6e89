package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/games/connect4/solver"
	"github.com/canopy-go/canopy/games/hex"
	"github.com/canopy-go/canopy/games/sequence"
	"github.com/canopy-go/canopy/games/sushigo"
	"github.com/canopy-go/canopy/games/tetrislink"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/canopy-go/canopy/spec"

	_ "github.com/canopy-go/canopy/games/all" // every game registers
)

// A workload is one fixed, seeded piece of hot-path work. setup builds
// what the work needs (not part of what a profile measures, but part of
// the instruction count, like process start-up) and returns run, which
// does the work once and returns a short description of the result: the
// same text on every run and every machine, so that a changed result
// shows the workload now does different work.
//
// Every workload runs on one goroutine at a time (GOMAXPROCS=1 under the
// gate, one GEMM thread, one engine worker), so that its instruction count
// does not depend on scheduling.
type workload struct {
	name string
	doc  string
	// data is the reference file the workload reads, relative to
	// shared/data; empty when it needs none.
	data string
	// startupOnly: run does nothing, the count is process start-up
	// alone; there is nothing to profile.
	startupOnly bool
	setup       func(env *runEnv) (run func() (string, error), err error)
}

// runEnv is what a workload's setup may use.
type runEnv struct {
	dataDir string // shared/data; "" when not found
	tmpDir  string // a private scratch directory, removed after the run
}

// errNoData is returned (wrapped) by a workload whose reference data is
// absent.
var errNoData = errors.New("reference data not found")

// workloads is the gate's set, in the order reports list them. Sizes are
// chosen so that each takes a few tens of milliseconds natively (a few
// seconds under cachegrind) and counts tens to a few hundred million
// instructions, where an added 3% is far above the run-to-run noise.
var workloads = []*workload{
	{name: "startup", doc: "process start and package initialisation of every package (tables, Zobrist keys, registries)",
		startupOnly: true,
		setup: func(*runEnv) (func() (string, error), error) {
			return func() (string, error) { return "nothing", nil }, nil
		}},

	playoutWorkload("tictactoe", 20000),
	playoutWorkload("connect4", 8000),
	playoutWorkload("hex:size=11", 1200),
	playoutWorkload("tetrislink:players=2", 1000),
	playoutWorkload("connect4d:d=5", 600),
	playoutWorkload("strands:size=6", 1000),
	playoutWorkload("sequence", 150),
	playoutWorkload("sushigo:players=4", 1500),

	fastPlayoutWorkload("connect4", 30000, func(s games.State, rng *rand.Rand) int {
		return s.(*connect4.State).RandomPlayout(rng)
	}),
	fastPlayoutWorkload("hex:size=11", 15000, func(s games.State, rng *rand.Rand) int {
		return s.(*hex.State).RandomPlayoutWinner(rng)
	}),
	fastPlayoutWorkload("tetrislink:players=2", 2500, func(s games.State, rng *rand.Rand) int {
		return s.(*tetrislink.State).PlayRandom(rng)
	}),
	fastPlayoutWorkload("sequence", 1000, func(s games.State, rng *rand.Rand) int {
		return s.(*sequence.State).PlayRandom(rng)
	}),
	fastPlayoutWorkload("sushigo:players=4", 3000, func(s games.State, rng *rand.Rand) int {
		st := s.(*sushigo.State)
		st.RandomPlayout(rng)
		return st.MoveNumber()
	}),

	{name: "solver-l3", data: "connect4/solver_L3_R1.txt",
		doc:   "Connect Four solver: the first 300 positions of solver_L3_R1.txt, one fresh table, scores checked",
		setup: solverSetup(300)},

	searchWorkload("uct-connect4", "UCT with random rollouts (fast playouts), 20k simulations from the empty board",
		"connect4", search.UCT, 20000),
	searchWorkload("puct-tetrislink", "PUCT with random rollouts, 4k simulations from the initial position, 2 players",
		"tetrislink:players=2", search.PUCT, 4000),
	{name: "heuristic-hex7", doc: "UCT with heuristic rollouts (the two-distance heuristic's best move at every step, study 001's Hex rows), 150 simulations on 7x7 after 12 moves",
		setup: heuristicHexSetup},

	{name: "engine-random", doc: "batcher + engine + self-play driver on the random backend: 8 Connect Four games, 4 at once, 32 simulations per move",
		setup: engineRandomSetup},

	forwardWorkload(1, 40, ""),
	forwardWorkload(16, 8, ""),
	forwardWorkload(256, 1, ""),
	forwardWorkload(16, 8, "im2col"),

	{name: "train-step", doc: "one Trainer.Step (forward, backward, Adam) on the 16x2 Connect Four net, batch 32",
		setup: trainSetup},

	{name: "selfplay-net", doc: "two Connect Four self-play games with an 8x1 CPU net, 16 simulations per move",
		setup: selfplayNetSetup},

	{name: "shards", doc: "self-play output: 96 synthetic Connect Four games into 3 .npz shards and manifests (OpenOutput, Add, Flush)",
		setup: shardsSetup},
}

// lookupWorkload returns the named workload or nil.
func lookupWorkload(name string) *workload {
	for _, w := range workloads {
		if w.name == name {
			return w
		}
	}
	return nil
}

// specName turns a game spec into the part of a workload name:
// "hex:size=11" -> "hex11".
func specName(spec string) string {
	name, opts, _ := strings.Cut(spec, ":")
	if _, v, ok := strings.Cut(opts, "="); ok {
		name += v
	}
	return name
}

// playoutWorkload plays n uniformly random games of spec through the
// generic games.RandomPlayout (Legal, Mask.Random and Apply through the
// interface; chance and simultaneous nodes included).
func playoutWorkload(spec string, n int) *workload {
	return &workload{
		name: "playout-" + specName(spec),
		doc:  fmt.Sprintf("%d random games of %s through games.RandomPlayout", n, spec),
		setup: func(*runEnv) (func() (string, error), error) {
			g, err := games.New(spec)
			if err != nil {
				return nil, err
			}
			init, s := g.NewInitialState(), g.NewInitialState()
			m := games.NewMask(g.NumActions())
			joint := make([]games.Action, g.NumPlayers())
			return func() (string, error) {
				rng := games.NewRand(1)
				moves := 0
				for range n {
					init.CloneInto(s)
					moves += games.RandomPlayout(s, rng, m, joint)
				}
				return fmt.Sprintf("games=%d actions=%d", n, moves), nil
			}, nil
		},
	}
}

// fastPlayoutWorkload plays n random games of spec through the game's
// specialised playout play (the path rollouts in search take); play
// returns a per-game figure (moves or winner) summed into the result.
func fastPlayoutWorkload(spec string, n int, play func(games.State, *rand.Rand) int) *workload {
	return &workload{
		name: "playout-fast-" + specName(spec),
		doc:  fmt.Sprintf("%d random games of %s through the game's specialised playout", n, spec),
		setup: func(*runEnv) (func() (string, error), error) {
			g, err := games.New(spec)
			if err != nil {
				return nil, err
			}
			init, s := g.NewInitialState(), g.NewInitialState()
			return func() (string, error) {
				rng := games.NewRand(1)
				sum := 0
				for range n {
					init.CloneInto(s)
					sum += play(s, rng)
				}
				return fmt.Sprintf("games=%d sum=%d", n, sum), nil
			}, nil
		},
	}
}

// solverSetup solves the first n positions of solver_L3_R1.txt with a
// freshly reset solver and checks every score.
func solverSetup(n int) func(env *runEnv) (func() (string, error), error) {
	return func(env *runEnv) (func() (string, error), error) {
		if env.dataDir == "" {
			return nil, fmt.Errorf("%w: shared/data beside the repository", errNoData)
		}
		path := filepath.Join(env.dataDir, "connect4", "solver_L3_R1.txt")
		type line struct {
			pos   connect4.Position
			score int
		}
		var lines []line
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", errNoData, path)
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for ln := 1; sc.Scan() && len(lines) < n; ln++ {
			fields := strings.Fields(sc.Text())
			if len(fields) != 2 {
				return nil, fmt.Errorf("%s:%d: want <moves> <score>", path, ln)
			}
			pos, err := connect4.ParsePosition(fields[0])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, ln, err)
			}
			score, err := strconv.Atoi(fields[1])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, ln, err)
			}
			lines = append(lines, line{pos, score})
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		if len(lines) < n {
			return nil, fmt.Errorf("%s: %d positions, want at least %d", path, len(lines), n)
		}
		s := solver.New()
		return func() (string, error) {
			s.Reset()
			for i, l := range lines {
				if got := s.Solve(l.pos); got != l.score {
					return "", fmt.Errorf("%s:%d: solver says %d, file says %d", path, i+1, got, l.score)
				}
			}
			return fmt.Sprintf("positions=%d nodes=%d", len(lines), s.Nodes()), nil
		}, nil
	}
}

// searchWorkload runs one single-threaded search of sims simulations with
// random rollouts from the initial state of spec.
func searchWorkload(name, doc, spec string, rule search.Rule, sims int) *workload {
	return &workload{name: name, doc: doc, setup: func(*runEnv) (func() (string, error), error) {
		g, err := games.New(spec)
		if err != nil {
			return nil, err
		}
		o := search.DefaultOptions()
		o.Rule, o.Sims, o.Threads, o.MaxNodes = rule, sims, 1, sims+16
		root := g.NewInitialState()
		return func() (string, error) {
			t, err := search.New(g, o, 1)
			if err != nil {
				return "", err
			}
			n := t.Search(context.Background(), root)
			st := t.Stats()
			return fmt.Sprintf("sims=%d nodes=%d edges=%d", n, st.Nodes, st.Edges), nil
		}, nil
	}}
}

// heuristicHexSetup: an mcts search with rollout=heuristic on Hex 7x7,
// whose time is the heuristic's batch scoring (hex.State.HeuristicValues).
func heuristicHexSetup(*runEnv) (func() (string, error), error) {
	g := games.MustNew("hex:size=7")
	sp, err := spec.Parse("mcts:sel=uct,rollout=heuristic,sims=150")
	if err != nil {
		return nil, err
	}
	o, err := search.ParseOptions(g, sp, agent.Env{})
	if err != nil {
		return nil, err
	}
	o.MaxNodes = o.Sims + 16
	root := g.NewInitialState()
	for _, m := range strings.Fields("d4 c5 e3 c3 b4 e5 d5 d3 f2 e2 c4 f4") {
		a, err := root.ParseAction(m)
		if err != nil {
			return nil, err
		}
		root.Apply(a)
	}
	return func() (string, error) {
		t, err := search.New(g, o, 1)
		if err != nil {
			return "", err
		}
		n := t.Search(context.Background(), root)
		st := t.Stats()
		return fmt.Sprintf("sims=%d nodes=%d best=%s", n, st.Nodes, root.ActionString(t.RootStats(root.CurrentPlayer(), nil)[0].Action)), nil
	}, nil
}

// obsSize is the number of observation values of g.
func obsSize(g games.Game) int {
	n := 1
	for _, d := range g.ObservationShape() {
		n *= d
	}
	return n
}

// engineRandomSetup: self-play on the random backend, one worker.
func engineRandomSetup(*runEnv) (func() (string, error), error) {
	g := games.MustNew("connect4")
	return func() (string, error) {
		be := nets.NewRandomBackend(obsSize(g), g.NumActions(), 1, nets.BackendOptions{})
		e, err := engine.New(g, be, engine.Options{Workers: 1, Batch: 64, Slots: engine.SlotsFor(4, 1)})
		if err != nil {
			return "", err
		}
		defer e.Close()
		st := selfplay.DefaultSettings()
		st.Sims = 32
		positions := 0
		cfg := selfplay.Config{Settings: st, Seed: 1, NumGames: 8, Trees: 4,
			OnGame: func(r *selfplay.GameRecord) error { positions += r.Positions(); return nil }}
		if err := selfplay.Run(context.Background(), e, cfg); err != nil {
			return "", err
		}
		c := e.Counters()
		return fmt.Sprintf("positions=%d nodes=%d evals=%d", positions, c.Nodes, c.Evals), nil
	}, nil
}

// smallNet returns a seeded AlphaZero net for Connect Four with the given
// tower.
func smallNet(channels, blocks int) (*nets.Net, error) {
	cfg, err := nets.Preset("connect4")
	if err != nil {
		return nil, err
	}
	cfg.Channels, cfg.Blocks, cfg.ValueHidden = channels, blocks, 32
	return nets.New(cfg, 1)
}

// seededInputs returns n Connect Four observations of positions from
// seeded random games.
func seededInputs(n int) []float32 {
	g := connect4.New()
	size := obsSize(g)
	in := make([]float32, n*size)
	rng := games.NewRand(7)
	m := games.NewMask(g.NumActions())
	for i := range n {
		s := g.NewInitialState()
		for range rng.IntN(20) {
			if s.IsTerminal() {
				break
			}
			games.RandomStep(s, rng, m, nil)
		}
		s.Observation(0, in[i*size:(i+1)*size])
	}
	return in
}

// forwardWorkload runs reps inference passes at the given batch size on
// the 16x2 Connect Four net (about 0.9 MFLOP per position: valgrind runs
// AVX2 FMA code some 30 times slower than scalar code, so the nets stay
// small). conv names the 3x3 convolutions' algorithm (nets.
// ParseConvAlgorithm) and the workload, forward-CONV-bN; "" is the cpu
// backend's default, nets.AutoConvAlgorithm, chosen in the setup after the
// gate has set the kernels (Winograd under the gate's AVX2 kernels, with
// F(3x4) tiles on this board), and names forward-bN.
func forwardWorkload(batch, reps int, conv string) *workload {
	name, how := fmt.Sprintf("forward-b%d", batch), "the cpu backend's default 3x3 convolutions (conv=auto)"
	if conv != "" {
		name, how = fmt.Sprintf("forward-%s-b%d", conv, batch), conv+" 3x3 convolutions"
	}
	return &workload{
		name: name,
		doc:  fmt.Sprintf("%d CPU forward passes of batch %d, 16x2 Connect Four net, %s", reps, batch, how),
		setup: func(*runEnv) (func() (string, error), error) {
			net, err := smallNet(16, 2)
			if err != nil {
				return nil, err
			}
			algo := nets.AutoConvAlgorithm()
			if conv != "" {
				if algo, err = nets.ParseConvAlgorithm(conv); err != nil {
					return nil, err
				}
			}
			net.SetConvAlgorithm(algo)
			net.Reserve(batch)
			in := seededInputs(batch)
			pol, val := make([]float32, batch*net.PolicySize()), make([]float32, batch)
			return func() (string, error) {
				for range reps {
					net.Forward(batch, in, pol, val)
				}
				return fmt.Sprintf("value0=%.4f policy0=%.4f", val[0], pol[0]), nil
			}, nil
		},
	}
}

// trainSetup: one Adam training step at batch 32 on a fresh net.
func trainSetup(*runEnv) (func() (string, error), error) {
	const n = 32
	g := connect4.New()
	P := g.NumActions()
	in := seededInputs(n)
	rng := games.NewRand(11)
	b := &nets.Batch{N: n, Input: in, Policy: make([]float32, n*P), Value: make([]float32, n)}
	for i := range n {
		sum := float32(0)
		for a := range P {
			b.Policy[i*P+a] = float32(rng.Float64())
			sum += b.Policy[i*P+a]
		}
		for a := range P {
			b.Policy[i*P+a] /= sum
		}
		b.Value[i] = float32(rng.IntN(3) - 1)
	}
	return func() (string, error) {
		net, err := smallNet(16, 2)
		if err != nil {
			return "", err
		}
		tr := &nets.Trainer{Net: net, Optimizer: &nets.Adam{LR: 1e-3}, L2: 1e-4}
		loss, err := tr.Step(b)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("loss=%.4f", loss.Total), nil
	}, nil
}

// selfplayNetSetup: two self-play games on a small CPU net, one worker.
func selfplayNetSetup(*runEnv) (func() (string, error), error) {
	g := games.MustNew("connect4")
	return func() (string, error) {
		net, err := smallNet(8, 1)
		if err != nil {
			return "", err
		}
		be, err := nets.NewCPUBackend(net, nets.BackendOptions{MaxBatch: 8})
		if err != nil {
			return "", err
		}
		e, err := engine.New(g, be, engine.Options{Workers: 1, Batch: 8, Slots: engine.SlotsFor(2, 1)})
		if err != nil {
			return "", err
		}
		defer e.Close()
		st := selfplay.DefaultSettings()
		st.Sims = 16
		positions := 0
		cfg := selfplay.Config{Settings: st, Seed: 1, NumGames: 2, Trees: 2,
			OnGame: func(r *selfplay.GameRecord) error { positions += r.Positions(); return nil }}
		if err := selfplay.Run(context.Background(), e, cfg); err != nil {
			return "", err
		}
		c := e.Counters()
		return fmt.Sprintf("positions=%d nodes=%d evals=%d", positions, c.Nodes, c.Evals), nil
	}, nil
}

// shardsSetup builds 96 synthetic game records (seeded random Connect Four
// games with made-up policies) and writes them as three shards.
func shardsSetup(env *runEnv) (func() (string, error), error) {
	const numGames, perShard = 96, 32
	g := connect4.New()
	size, P := obsSize(g), g.NumActions()
	rng := games.NewRand(5)
	m := games.NewMask(P)
	recs := make([]*selfplay.GameRecord, numGames)
	for id := range recs {
		r := &selfplay.GameRecord{ID: id, Returns: make([]float64, 2)}
		s := g.NewInitialState()
		for !s.IsTerminal() {
			p := s.CurrentPlayer()
			row := make([]float32, size)
			s.Observation(p, row)
			r.Obs = append(r.Obs, row...)
			s.Legal(m)
			for a := range P {
				legal := uint8(0)
				if m.Has(games.Action(a)) {
					legal = 1
				}
				r.Legal = append(r.Legal, legal)
				r.Policy = append(r.Policy, float32(legal)/float32(m.Count()))
			}
			r.Value = append(r.Value, 0)
			r.RootQ = append(r.RootQ, float32(rng.Float64()*2-1))
			r.Ply = append(r.Ply, int32(s.MoveNumber()))
			s.Apply(m.Random(rng))
		}
		s.Returns(r.Returns)
		r.Nodes = int64(len(r.Value) * 32)
		recs[id] = r
	}
	st := selfplay.DefaultSettings()
	n := 0
	return func() (string, error) {
		n++
		dir := filepath.Join(env.tmpDir, fmt.Sprintf("shards-%d", n))
		man := selfplay.Manifest{Game: g.Spec(), ObsShape: g.ObservationShape(), Actions: P,
			Network: "perf", NetworkSHA256: "random", Backend: "none", Settings: st, Seed: 1, Games: numGames}
		o, err := selfplay.OpenOutput(dir, man, false)
		if err != nil {
			return "", err
		}
		o.ShardPositions, o.FlushGames, o.FlushEvery = 1<<30, 0, 1<<62
		for i, r := range recs {
			if err := o.Add(r); err != nil {
				return "", err
			}
			if (i+1)%perShard == 0 {
				if err := o.Flush(); err != nil {
					return "", err
				}
			}
		}
		t := o.Manifest().Totals
		if err := os.RemoveAll(dir); err != nil {
			return "", err
		}
		return fmt.Sprintf("shards=%d games=%d positions=%d", len(o.Manifest().Shards), t.Games, t.Positions), nil
	}, nil
}
