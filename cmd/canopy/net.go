package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/onnx"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	register(&command{
		Name:    "net",
		Summary: "create, inspect and evaluate policy-value networks",
		Usage:   "init|grow|info|eval|import|export [flags]",
		Help: `Subcommands:
  canopy net init --out F [--preset P] [--game G] [--seed S]
      create a network with random weights (presets: ` + strings.Join(nets.Presets(), ", ") + `).
      The input shape and policy size always come from a game: --game, else the
      preset's own game (megazero: connect4d). With --game and no --preset, the
      net is the built-in one for that game (what selfplay uses without --net:
      preset connect4 for connect4, a small 32x2 net otherwise); with neither,
      preset connect4
  canopy net grow --net F --out G [--channels N] [--blocks N] [--seed S]
      a wider and deeper copy of an AlphaZero-head network that computes the
      same policy and values (Net2Net): train it on to continue in the larger
      network instead of from random weights
  canopy net info F [--json]
      print the config, parameter count and FLOPs per evaluation (for an
      .onnx file: its inputs, outputs, operators and metadata)
  canopy net eval --net F [--game G] [--moves M] [--player P] [--seed S] [--json]
      evaluate one position (M is the game's state notation; default the
      initial position; G defaults to the game the net was made for) and print
      the policy over the legal actions and the value for the player to move
      (with a per-player value head, games of 3+ players: every player's too,
      by seat). Chance events before the first decision (dealing cards) are sampled
      with --seed and printed; at a simultaneous move (Sushi Go) --player
      says whose choice the network sees the position for (default 0)` + netOnnxHelp,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("missing subcommand: init, grow, info, eval, import or export")
				}
				run, ok := map[string]func(*env, []string) error{
					"init": netInit, "grow": netGrow, "info": netInfo, "eval": netEval, "import": netImport, "export": netExport,
				}[args[0]]
				if !ok {
					return usagef("unknown subcommand %q%s (want init, grow, info, eval, import or export)", args[0], spec.Suggest(args[0], []string{"init", "grow", "info", "eval", "import", "export"}))
				}
				return subcommandFailed(args[0], run(e, args[1:]))
			}
		},
	})
}

// netSubs describes the net subcommands for their --help.
var netSubs = map[string]struct{ usage, summary string }{
	"init":   {"--out FILE [--preset P | --game G] [--channels N --blocks N] [--seed S]", "Writes a network with random weights: a preset's architecture, or the game's built-in one shaped for --game."},
	"grow":   {"--net FILE --out FILE [--channels N] [--blocks N] [--seed S]", "Writes a wider and deeper copy of an AlphaZero-head network that gives the same policy and values (Net2Net: copied channels with their readers' weights split, new blocks that add zero), to train on from where the smaller one stood."},
	"info":   {"FILE [--json]", "Prints a network's architecture, parameter count and metadata (.safetensors, or an .onnx model's inputs, outputs and operators)."},
	"eval":   {"--net FILE [--game G] [--moves M] [--player P] [--json]", "Prints the network's policy over the legal moves and its value for the player to move (and, with a per-player value head, every player's by seat), on one position."},
	"import": {"MODEL.onnx [--game G] [--out FILE] [--policy-output N] [--value-output N]", "Converts an ONNX policy-value network into a Canopy network (docs/ONNX.md)."},
	"export": {"NET --onnx OUT.onnx [--game G]", "Writes a Canopy network as an ONNX model, opset 17 with a dynamic batch (docs/ONNX.md)."},
}

// parseSub parses a subcommand's flags, allowing positional arguments
// before and after them.
func parseSub(e *env, name string, fs *flag.FlagSet, args []string) ([]string, error) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: canopy net %s %s\n\n%s\n\nFlags:\n", name, netSubs[name].usage, netSubs[name].summary)
		printFlags(fs)
	}
	var pos []string
	for {
		if err := parseSubFlags(e, fs, args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func netInit(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy net init", flag.ContinueOnError)
	preset, out, game := new(string), new(string), new(string)
	seed, channels, blocks, valuePlayers := new(uint64), new(int), new(int), new(int)
	spec.Table{
		spec.String("preset", preset, nets.DefaultPreset, "architecture preset: "+strings.Join(nets.Presets(), ", ")+"; without --preset, --game picks the game's built-in net"),
		spec.String("out", out, "", "output file (.safetensors)"),
		gameOption(game, "", "its observation shape and action count shape the net (default: the preset's game)"),
		seedOption(seed, "for the weights"),
		spec.Int("channels", channels, 0, 0, 1024, "residual tower width, overriding the preset's (AlphaZero heads; 0 = the preset's)"),
		spec.Int("blocks", blocks, 0, 0, 64, "residual blocks, overriding the preset's (AlphaZero heads; 0 = the preset's)"),
		spec.Int("value-players", valuePlayers, 0, 0, 64, "value head: 0 = one value per player for games of 3 or more players (the scalar head for 2), 1 = the scalar head (the mover's value; az spreads it as -v/(players-1)), N = one per player of an N-player game"),
	}.Flags(fs)
	pos, err := parseSub(e, "init", fs, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *out == "" {
		return usagef("--out is required")
	}
	if err := checkOutputFile(*out); err != nil {
		return fmt.Errorf("--out: %v", err)
	}
	cfg, why, err := initConfig(*preset, flagSet(fs, "preset"), *game)
	if err != nil {
		return err
	}
	if flagSet(fs, "value-players") {
		g, err := games.New(cfg.Game)
		if err != nil {
			return fmt.Errorf("--value-players: %v", err)
		}
		cfg.ValuePlayers = *valuePlayers
		if cfg, err = cfg.ForGame(g); err != nil {
			return usagef("--value-players: %v", err)
		}
	}
	if *channels != 0 || *blocks != 0 {
		if cfg.Head != nets.HeadAlphaZero {
			return usagef("--channels and --blocks apply to AlphaZero-head presets, not %s", cfg.Preset)
		}
		if *channels > 0 {
			cfg.Channels = *channels
		}
		if *blocks > 0 {
			cfg.Blocks = *blocks
		}
		cfg.Preset += fmt.Sprintf("-%dx%d", cfg.Channels, cfg.Blocks)
		why += ", resized"
		if err := cfg.Normalize(); err != nil {
			return usagef("%v", err)
		}
	}
	net, err := nets.New(cfg, *seed)
	if err != nil {
		return err
	}
	if err := net.Save(*out); err != nil {
		return fmt.Errorf("%v", err)
	}
	fmt.Fprintf(e.Stdout, "wrote %s: %s (%s), %d parameters, %.1f MFLOP per evaluation\n",
		*out, describe(net.Config()), why, net.NumParams(), float64(net.FLOPs())/1e6)
	return nil
}

// initConfig picks the config of `canopy net init` and says why. The
// shape always comes from a game: gameSpec, else the preset's own game.
// With a game and no explicit preset, the config is the game's built-in
// net (nets.DefaultConfig, what selfplay uses without --net).
func initConfig(preset string, presetGiven bool, gameSpec string) (nets.Config, string, error) {
	var g games.Game
	if gameSpec != "" {
		var err error
		if g, err = games.New(gameSpec); err != nil {
			return nets.Config{}, "", usagef("--game: %v", err)
		}
		if !presetGiven {
			cfg, err := nets.DefaultConfig(g)
			if err != nil {
				return cfg, "", fmt.Errorf("no built-in net for %s: %v (pass --preset)", g.Spec(), err)
			}
			return cfg, fmt.Sprintf("the built-in net for %s; --preset picks another", g.Spec()), nil
		}
	}
	cfg, err := nets.Preset(preset)
	if err != nil {
		return cfg, "", usagef("--preset: %v", err)
	}
	why := "--preset " + preset
	if !presetGiven {
		why = "default preset"
	}
	if g == nil {
		if cfg.Game == "" {
			return cfg, "", usagef("preset %s names no game: pass --game", preset)
		}
		if g, err = games.New(cfg.Game); err != nil {
			return cfg, "", fmt.Errorf("preset %s needs game %q: %v", preset, cfg.Game, err)
		}
		why += ", shaped for its game " + g.Spec()
	} else {
		why += ", shaped for --game " + g.Spec()
	}
	if cfg, err = cfg.ForGame(g); err != nil {
		return cfg, "", fmt.Errorf("%v", err)
	}
	return cfg, why, nil
}

func helpOK(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func describe(c nets.Config) string {
	s := fmt.Sprintf("%s input %dx%dx%d, policy %d", c.Head, c.InputPlanes, c.Height, c.Width, c.PolicySize)
	if c.Head == nets.HeadAlphaZero {
		s += fmt.Sprintf(", %d blocks x %d channels, value hidden %d", c.Blocks, c.Channels, c.ValueHidden)
	} else {
		s += fmt.Sprintf(", convs %v, dense %d", c.ConvChannels, c.Dense)
	}
	if c.ValuePlayers > 1 {
		s += fmt.Sprintf(", one value per player (%d)", c.ValuePlayers)
	}
	if c.Preset != "" {
		s = "preset " + c.Preset + ": " + s
	}
	return s
}

func netInfo(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy net info", flag.ContinueOnError)
	asJSON := new(bool)
	spec.Table{jsonOption(asJSON, "")}.Flags(fs)
	pos, err := parseSub(e, "info", fs, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) != 1 {
		return usagef("want exactly one file, got %d arguments", len(pos))
	}
	if nets.IsONNXPath(pos[0]) {
		return onnxInfo(e, pos[0], *asJSON)
	}
	net, err := nets.Load(pos[0])
	if err != nil {
		return netUsage(err)
	}
	c := net.Config()
	if *asJSON {
		return writeNetJSON(e.Stdout, map[string]any{"file": pos[0], "config": c, "params": net.NumParams(), "flops": net.FLOPs()})
	}
	_, err = fmt.Fprintf(e.Stdout, "%s\n  %s\n  game %s\n  parameters %d\n  FLOPs per evaluation %d (%.2f MFLOP)\n  config %s\n",
		pos[0], describe(c), c.Game, net.NumParams(), net.FLOPs(), float64(net.FLOPs())/1e6, c.JSON())
	return stdoutError(err)
}

// writeNetJSON prints v as indented JSON; a failed write is an error
// (stdoutError).
func writeNetJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return stdoutError(err)
}

// stdoutError says that the results could not be written (a full disk, a
// closed pipe): the command then fails instead of exiting 0 with nothing
// printed. nil stays nil.
func stdoutError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("cannot write the results to stdout: %v", unwrapPath(err))
}

type actionEval struct {
	Action string  `json:"action"`
	ID     int     `json:"id"`
	Prob   float64 `json:"prob"`
	Logit  float64 `json:"logit"`
}

func netEval(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy net eval", flag.ContinueOnError)
	file, game, moves := new(string), new(string), new(string)
	seed, asJSON, askPlayer := new(uint64), new(bool), new(int)
	spec.Table{
		spec.File("net", file, "", "network: a .safetensors file, a shipped name, or an ONNX model (.onnx, as agents take it)"),
		gameOption(game, "", "default: the game stored with the net"),
		spec.String("moves", moves, "", "position in the game's state notation (not a move list; default: the initial position)"),
		playerOption(askPlayer, "the network sees the position from that player's view"),
		seedOption(seed, "for the chance events (deals) before the first decision"),
		jsonOption(asJSON, ""),
	}.Flags(fs)
	pos, err := parseSub(e, "eval", fs, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *file == "" {
		return usagef("--net is required")
	}
	g, be, err := evalBackend(*file, *game)
	if err != nil {
		return err
	}
	var st games.State
	if *moves == "" {
		st = g.NewInitialState()
	} else if st, err = g.ParseState(*moves); err != nil {
		return usagef("bad --moves for %s: %v", g.Spec(), err)
	}
	dealt, err := sampleChance(st, g, *seed)
	if err != nil {
		return fmt.Errorf("%v", err)
	}
	mover := st.CurrentPlayer()
	player := mover // whose decision the network evaluates
	switch {
	case st.IsTerminal() || mover == games.TerminalPlayer:
		return fmt.Errorf("position %q is terminal: no player to move (give --moves of an earlier position)", clip(st.String()))
	case mover == games.SimultaneousPlayer:
		// Every player chooses here: --player says whose choice.
		if player = max(*askPlayer, 0); player >= g.NumPlayers() {
			return usagef("--player %d: %s has players 0..%d", player, g.Spec(), g.NumPlayers()-1)
		}
	case mover < 0:
		return fmt.Errorf("position %q has no player to move (player %d)", clip(st.String()), mover)
	case *askPlayer >= 0 && *askPlayer != mover:
		return usagef("--player %d: player %d is to move (--player chooses among the players of a simultaneous move)", *askPlayer, mover)
	}
	// Through an engine, which encodes the position as the network takes it
	// (the observation, or with the legal-move plane) and sizes the value
	// head's outputs: one (the mover's) for a scalar head, one per player,
	// mover first, for a per-player head.
	eng, err := engine.New(g, be, engine.Options{Batch: 1, Workers: 1})
	if err != nil {
		return fmt.Errorf("%s: %v", *file, err)
	}
	logits, value := make([]float32, g.NumActions()), make([]float32, eng.ValueSize())
	// Every backend refuses NaN or infinite outputs (nets.CheckFinite).
	err = eng.EvaluateValues(context.Background(), st, player, logits, value)
	eng.Close()
	if err != nil {
		return fmt.Errorf("%s on %q: %v", *file, clip(st.String()), err)
	}
	legal := games.NewMask(g.NumActions())
	games.LegalOf(st, player, legal)
	probs := make([]float32, len(logits))
	nets.MaskedSoftmax(logits, legal, probs)
	var acts []actionEval
	for a := range legal.All() {
		acts = append(acts, actionEval{st.ActionString(a), int(a), float64(probs[a]), float64(logits[a])})
	}
	sort.SliceStable(acts, func(i, j int) bool { return acts[i].Prob > acts[j].Prob })
	var seats []float32 // every player's value by seat (a per-player head), as value's float32
	if len(value) > 1 {
		for _, v := range nets.SeatValues(value, player) {
			seats = append(seats, float32(v))
		}
	}
	if *asJSON {
		out := map[string]any{"game": g.Spec(), "state": st.String(), "player": player, "value": value[0], "policy": acts}
		if mover == games.SimultaneousPlayer {
			out["simultaneous"] = true
		}
		if seats != nil {
			out["values"] = seats
		}
		if len(dealt) > 0 {
			out["chance"], out["seed"] = dealt, *seed
		}
		return writeNetJSON(e.Stdout, out)
	}
	w := bufio.NewWriter(e.Stdout)
	if len(dealt) > 0 {
		fmt.Fprintf(w, "sampled %d chance events with --seed %d: %s\n", len(dealt), *seed, strings.Join(dealt, " "))
	}
	who := fmt.Sprintf("player %d to move", player)
	if mover == games.SimultaneousPlayer {
		who = fmt.Sprintf("player %d to choose (a simultaneous move)", player)
	}
	fmt.Fprintf(w, "%s  %s  %s\nvalue %+.4f\n", g.Spec(), st.String(), who, value[0])
	if seats != nil {
		fmt.Fprintf(w, "values by seat:")
		for p, v := range seats {
			fmt.Fprintf(w, "  %d %+.4f", p, v)
		}
		fmt.Fprintln(w)
	}
	for _, a := range acts {
		fmt.Fprintf(w, "  %-8s %6.2f%%  (logit %+.3f)\n", a.Action, 100*a.Prob, a.Logit)
	}
	return stdoutError(w.Flush())
}

// evalBackend opens net eval's network for one position at a time on the
// CPU: a Canopy .safetensors file (a shipped name or init too) or an ONNX
// model (as agents take it, nets/onnx), with the game given, else the one
// the network names.
func evalBackend(file, game string) (games.Game, nets.Backend, error) {
	spec := game
	if spec == "" {
		var err error
		if spec, err = netGame(file); err != nil {
			return nil, nil, inputUsage(fmt.Errorf("--net: %w", err))
		}
	}
	g, err := games.New(spec)
	if err != nil {
		if game == "" {
			return nil, nil, fmt.Errorf("the network's game %q: %v (pass --game)", spec, err)
		}
		return nil, nil, usagef("--game: %v", err)
	}
	if nets.IsONNXPath(file) {
		be, _, _, err := onnx.OpenBackend(file, g, "cpu", 1)
		if err != nil {
			return nil, nil, netUsage(fmt.Errorf("--net: %w", err))
		}
		return g, be, nil
	}
	// OpenNet takes files and shipped names, and refuses a network made for
	// another game even where its shapes fit.
	net, _, err := nets.OpenNet(file, g)
	if err != nil {
		return nil, nil, netUsage(fmt.Errorf("--net: %w", err))
	}
	be, err := nets.NewCPUBackend(net, nets.BackendOptions{MaxBatch: 1})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", file, err)
	}
	return g, be, nil
}

// sampleChance applies sampled outcomes to st while it is at a chance node
// (dealing, drawing), with a generator seeded by seed, until a player must
// decide or the game ends; it returns the outcomes' texts in order.
func sampleChance(st games.State, g games.Game, seed uint64) ([]string, error) {
	if st.CurrentPlayer() != games.ChancePlayer {
		return nil, nil
	}
	cs, ok := st.(games.ChanceState)
	if !ok {
		return nil, fmt.Errorf("position %q is a chance node but %s cannot sample its outcomes", clip(st.String()), g.Spec())
	}
	rng := games.NewRand(seed)
	var dealt []string
	for range g.MaxGameLength() + 1 {
		if st.IsTerminal() || st.CurrentPlayer() != games.ChancePlayer {
			return dealt, nil
		}
		a := cs.SampleChance(rng)
		dealt = append(dealt, st.ActionString(a))
		st.Apply(a)
	}
	return dealt, fmt.Errorf("still at a chance node after %d sampled events (a bug in %s)", len(dealt), g.Spec())
}
