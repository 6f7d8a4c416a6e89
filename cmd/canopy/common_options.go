package main

import (
	"math"

	"github.com/canopy-go/canopy/spec"
)

// The options many commands share, each declared once here (issue 39,
// item 1: one declaration per option) so that their names, kinds, ranges
// and help cannot drift from one command to the next. A command adds
// them to its own spec.Table; note, when not empty, says what the option
// is for in that command and is appended to the shared help. A default
// that differs by command (--game: none for most, connect4 where a game
// is implied) is the command's argument, and shows in its help.

// withNote appends a command's note to the shared help.
func withNote(help, note string) string {
	if note == "" {
		return help
	}
	return help + "; " + note
}

// gameOption declares --game, the game spec (see `canopy games`).
// Commands check it with newGame, which names a misspelled game.
func gameOption(p *string, def, note string) spec.Option {
	return spec.String("game", p, def, withNote("game spec, e.g. connect4 or hex:size=7 (see canopy games)", note))
}

// playerOption declares --player: whose decision is asked for at a
// simultaneous-move position (every player chooses there); elsewhere the
// player to move, whom --player may only confirm.
func playerOption(p *int, note string) spec.Option {
	return spec.Int("player", p, -1, -1, 255, withNote("player to ask at simultaneous positions (-1: player 0)", note))
}

// seedOption declares --seed, the random seed: runs with the same seed
// and flags are the same run.
func seedOption(p *uint64, note string) spec.Option {
	o := spec.Uint64("seed", p, 1, 0, math.MaxUint64, withNote("random seed", note))
	o.Range = "0..2^64-1" // as help shows it; Set checks the declared range
	return o
}

// jsonOption declares --json: the result on stdout as JSON (progress and
// warnings stay on stderr).
func jsonOption(p *bool, note string) spec.Option {
	return spec.Bool("json", p, false, withNote("print as JSON", note))
}

// quietOption declares --quiet: no progress or status line on stderr.
func quietOption(p *bool) spec.Option {
	return spec.Bool("quiet", p, false, "no progress line")
}

// backendHelp lists the backend specs --backend takes.
const backendHelp = "backend spec: auto, cpu[:threads=N], cuda[:device=0,precision=fp16], ort:model=FILE.onnx, random (see canopy backends)"

// backendOption declares --backend, the network backend spec (checked
// by agentEnv or nets.ParseBackendSpec, which name the fix).
func backendOption(p *string, note string) spec.Option {
	return spec.String("backend", p, "auto", withNote(backendHelp, note))
}

// agentBackendNote is --backend's note in commands that build agents:
// options with commas, such as cuda:device=0,precision=fp16, cannot sit
// inside an agent spec; this flag carries them.
const agentBackendNote = "for network agents (az, policy, mcts:eval=NET) that say backend=auto"

// options returns the profile flags, --cpuprofile and --memprofile.
func (p *profiler) options() spec.Table {
	return spec.Table{
		spec.String("cpuprofile", &p.cpu, "", "write a pprof CPU profile to this file"),
		spec.String("memprofile", &p.mem, "", "write a pprof heap (allocation) profile to this file"),
	}
}

// maxParallel bounds --parallel: more games at once than this only
// costs memory.
const maxParallel = 1 << 16

// parallelOption declares --parallel, the games played at once
// (results do not depend on it).
func parallelOption(p *int) spec.Option {
	return spec.Int("parallel", p, 0, 0, maxParallel, "games played at once (0: the number of CPUs)")
}

// agentsOption declares --agents, a list of agent specs separated by ','
// or ';' (splitAgents keeps an agent's key=value options with it).
func agentsOption(p *string, def, note string) spec.Option {
	return spec.String("agents", p, def, withNote("agent specs separated by ',' or ';', e.g. random,mcts:sims=100,c=1.4 (see canopy agents)", note))
}

// movesOption declares --moves, a position: a move list (separated by
// spaces or commas, applied from the initial position) or the game's
// state notation (parsePosition).
func movesOption(p *string, note string) spec.Option {
	return spec.String("moves", p, "", withNote("position: a move list or the game's state notation", note))
}
