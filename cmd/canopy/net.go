package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

func init() {
	register(&command{
		Name:    "net",
		Summary: "create, inspect and evaluate policy-value networks",
		Usage:   "init|info|eval [flags]",
		Help: `Subcommands:
  canopy net init --preset P --out F [--game G] [--seed S]
      create a network with random weights (presets: ` + strings.Join(nets.Presets(), ", ") + `);
      --game takes the input shape and policy size from a game (megazero needs one;
      it defaults to the preset's game)
  canopy net info F [--json]
      print the config, parameter count and FLOPs per evaluation
  canopy net eval --net F [--game G] [--moves M] [--json]
      evaluate one position (M is the game's state notation; default the
      initial position; G defaults to the game the net was made for) and print
      the policy over the legal actions and the value for the player to move`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("missing subcommand: init, info or eval")
				}
				switch args[0] {
				case "init":
					return netInit(e, args[1:])
				case "info":
					return netInfo(e, args[1:])
				case "eval":
					return netEval(e, args[1:])
				}
				return usagef("unknown subcommand %q (want init, info or eval)", args[0])
			}
		},
	})
}

// parseSub parses a subcommand's flags, allowing positional arguments
// before and after them.
func parseSub(e *env, name string, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseSubFlags(e, fs, args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("net %s: %v", name, err)
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
	preset := fs.String("preset", nets.DefaultPreset, "architecture preset: "+strings.Join(nets.Presets(), ", "))
	out := fs.String("out", "", "output file (.safetensors)")
	game := fs.String("game", "", "game whose observation shape and action count to use (default: the preset's)")
	seed := fs.Uint64("seed", 1, "random seed for the weights")
	pos, err := parseSub(e, "init", fs, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) > 0 {
		return usagef("net init: unexpected argument %q", pos[0])
	}
	if *out == "" {
		return usagef("net init: --out is required")
	}
	if err := checkOutputFile(*out); err != nil {
		return fmt.Errorf("net init: --out: %v", err)
	}
	cfg, err := nets.Preset(*preset)
	if err != nil {
		return usagef("net init: --preset: %v", err)
	}
	if *game != "" {
		if _, err := games.New(*game); err != nil {
			return usagef("net init: --game: %v", err)
		}
	}
	spec := *game
	if spec == "" && cfg.Normalize() != nil {
		spec = cfg.Game // the preset's board comes from its game
	}
	if spec != "" {
		g, err := games.New(spec)
		if err != nil {
			return fmt.Errorf("net init: preset %s needs game %q: %v", *preset, spec, err)
		}
		if cfg, err = cfg.ForGame(g); err != nil {
			return err
		}
	}
	net, err := nets.New(cfg, *seed)
	if err != nil {
		return err
	}
	if err := net.Save(*out); err != nil {
		return fmt.Errorf("net init: %v", err)
	}
	fmt.Fprintf(e.Stdout, "wrote %s: %s, %d parameters, %.1f MFLOP per evaluation\n", *out, describe(net.Config()), net.NumParams(), float64(net.FLOPs())/1e6)
	return nil
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
	if c.Preset != "" {
		s = "preset " + c.Preset + ": " + s
	}
	return s
}

func netInfo(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy net info", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseSub(e, "info", fs, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) != 1 {
		return usagef("net info: want exactly one file, got %d arguments", len(pos))
	}
	net, err := nets.Load(pos[0])
	if err != nil {
		return fmt.Errorf("net info: %v", err)
	}
	c := net.Config()
	if *asJSON {
		return writeNetJSON(e.Stdout, map[string]any{"file": pos[0], "config": c, "params": net.NumParams(), "flops": net.FLOPs()})
	}
	fmt.Fprintf(e.Stdout, "%s\n  %s\n  game %s\n  parameters %d\n  FLOPs per evaluation %d (%.2f MFLOP)\n  config %s\n",
		pos[0], describe(c), c.Game, net.NumParams(), net.FLOPs(), float64(net.FLOPs())/1e6, c.JSON())
	return nil
}

func writeNetJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type actionEval struct {
	Action string  `json:"action"`
	ID     int     `json:"id"`
	Prob   float64 `json:"prob"`
	Logit  float64 `json:"logit"`
}

func netEval(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy net eval", flag.ContinueOnError)
	file := fs.String("net", "", "network file")
	game := fs.String("game", "", "game spec (default: the game stored with the net)")
	moves := fs.String("moves", "", "position in the game's state notation (default: the initial position)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseSub(e, "eval", fs, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) > 0 {
		return usagef("net eval: unexpected argument %q", pos[0])
	}
	if *file == "" {
		return usagef("net eval: --net is required")
	}
	net, err := nets.Load(*file)
	if err != nil {
		return fmt.Errorf("net eval: --net: %v", err)
	}
	spec := *game
	if spec == "" {
		spec = net.Config().Game
	}
	if spec == "" {
		return usagef("net eval: --game is required (the net does not name its game)")
	}
	g, err := games.New(spec)
	if err != nil {
		return usagef("net eval: --game: %v", err)
	}
	if games.ObservationSize(g) != net.InputSize() || g.NumActions() != net.PolicySize() {
		return fmt.Errorf("net eval: %s expects %d inputs and %d actions, game %s has %d and %d (make a net for it with `canopy net init --game %s`)",
			*file, net.InputSize(), net.PolicySize(), g.Spec(), games.ObservationSize(g), g.NumActions(), g.Spec())
	}
	var st games.State
	if *moves == "" {
		st = g.NewInitialState()
	} else if st, err = g.ParseState(*moves); err != nil {
		return usagef("net eval: bad --moves for %s: %v", g.Spec(), err)
	}
	player := st.CurrentPlayer()
	if st.IsTerminal() || player < 0 {
		return fmt.Errorf("net eval: position %q has no player to move (terminal, chance or simultaneous)", st.String())
	}
	obs := make([]float32, net.InputSize())
	st.Observation(player, obs)
	logits, value := make([]float32, net.PolicySize()), make([]float32, 1)
	net.Forward(1, obs, logits, value)
	legal := games.NewMask(g.NumActions())
	st.Legal(legal)
	probs := make([]float32, len(logits))
	nets.MaskedSoftmax(logits, legal, probs)
	var acts []actionEval
	for a := range legal.All() {
		acts = append(acts, actionEval{st.ActionString(a), int(a), float64(probs[a]), float64(logits[a])})
	}
	sort.SliceStable(acts, func(i, j int) bool { return acts[i].Prob > acts[j].Prob })
	if *asJSON {
		return writeNetJSON(e.Stdout, map[string]any{"game": g.Spec(), "state": st.String(), "player": player,
			"value": value[0], "policy": acts})
	}
	fmt.Fprintf(e.Stdout, "%s  %s  player %d to move\nvalue %+.4f\n", g.Spec(), st.String(), player, value[0])
	for _, a := range acts {
		fmt.Fprintf(e.Stdout, "  %-8s %6.2f%%  (logit %+.3f)\n", a.Action, 100*a.Prob, a.Logit)
	}
	return nil
}
