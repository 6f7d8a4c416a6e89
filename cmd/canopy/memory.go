package main

import (
	"bufio"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/canopy-go/canopy/spec"
	"github.com/canopy-go/canopy/train"
	"github.com/canopy-go/canopy/zero"
)

// Memory estimates. A command whose memory grows with a flag (trees,
// simulations, batch sizes, population sizes, node budgets) estimates what
// it is about to allocate and refuses, with the figure, when that exceeds
// memLimitShare of the machine's physical memory: without the check the Go
// runtime dies with "fatal error: out of memory" (exit status 2, as if the
// command line were wrong) or the machine starts swapping.
//
// The estimates are those of the packages that allocate, tested there
// against measured allocations: search trees (search.Options.TreeBytes,
// AgentBytes), self-play (selfplay.Config.MemoryBytes), the engine's
// batcher ring (engine.Options.MemoryBytes), network scratch
// (nets.CPUScratchBytes) and training batches (train.Options.MemoryBytes).
// This file only adds them up and compares them with the machine. Everything else is small beside them at the sizes where the
// check matters. The limit is generous on purpose: the check is there to
// turn a crash into a clear error, not to second-guess sizes that fit.

// memLimitShare is the share of physical memory a command may plan to use.
const memLimitShare = 0.8

// fallbackMemory is assumed when the machine's memory cannot be read
// (not Linux, or /proc unreadable): 16 GiB.
const fallbackMemory = 16 << 30

// physicalMemory returns the machine's memory in bytes and whether it was
// measured (false: fallbackMemory). Tests replace it.
var physicalMemory = sync.OnceValues(func() (float64, bool) {
	if n, err := memTotal("/proc/meminfo"); err == nil {
		return n, true
	}
	return fallbackMemory, false
})

// memTotal reads MemTotal (in kB) from a /proc/meminfo-style file.
func memTotal(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseFloat(fields[1], 64)
			if err != nil || !(kb > 0) {
				return 0, fmt.Errorf("%s: bad MemTotal %q", path, fields[1])
			}
			return kb * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no MemTotal line", path)
}

// memEstimate is a planned allocation, by part.
type memEstimate struct {
	parts []memPart
}

type memPart struct {
	what  string
	bytes float64
}

// add records bytes for the part called what (parts of zero size are
// left out of messages).
func (m *memEstimate) add(what string, bytes float64) {
	if bytes > 0 {
		m.parts = append(m.parts, memPart{what, bytes})
	}
}

// total is the sum of the parts (float64: the products of absurd flag
// values overflow int64).
func (m *memEstimate) total() float64 {
	t := 0.0
	for _, p := range m.parts {
		t += p.bytes
	}
	return t
}

// check returns a usage error naming flags (the values that set the size,
// e.g. "--trees 10000000") when the estimate exceeds memLimitShare of
// physical memory, else nil.
func (m *memEstimate) check(flags string) error {
	need := m.total()
	have, measured := physicalMemory()
	if need <= memLimitShare*have {
		return nil
	}
	detail := ""
	if len(m.parts) > 1 {
		var parts []string
		for _, p := range m.parts {
			parts = append(parts, p.what+" "+formatBytes(p.bytes))
		}
		detail = " (" + strings.Join(parts, ", ") + ")"
	}
	machine := "this machine has " + formatBytes(have)
	if !measured {
		machine = "assuming " + formatBytes(have) + " (the machine's memory could not be read)"
	}
	return usagef("%s needs about %s of memory%s; %s and Canopy plans at most %.0f%% of it: use smaller values",
		flags, formatBytes(need), detail, machine, 100*memLimitShare)
}

// formatBytes prints a size in decimal units with two significant digits
// or more: "11 GB", "1.5 TB", "3e+09 TB".
func formatBytes(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	u := 0
	for b >= 1000 && u < len(units)-1 {
		b /= 1000
		u++
	}
	if b < 10 {
		return strconv.FormatFloat(b, 'f', 1, 64) + " " + units[u]
	}
	return strconv.FormatFloat(math.Round(b), 'g', 4, 64) + " " + units[u]
}

// selfPlayMemory estimates the memory of batched self-play (selfplay,
// bench search, zero) of cfg on g: the search trees and game records
// (selfplay.Config.MemoryBytes), the engine's batcher ring for batches
// of up to batch rows (engine.Options.MemoryBytes) and netBytes, the
// backend's own reservation (0 for none, see nets.CPUScratchBytes).
func selfPlayMemory(g games.Game, cfg selfplay.Config, batch int, netBytes float64) (*memEstimate, error) {
	sp, err := cfg.MemoryBytes(g)
	if err != nil {
		return nil, err
	}
	var m memEstimate
	m.add("search trees and game records", sp)
	trees := cfg.Trees
	if trees <= 0 {
		trees = 64
	}
	if n := cfg.NumGames; cfg.Games == nil && n > 0 {
		trees = min(trees, n)
	}
	leaves := max(cfg.Settings.Leaves, 1)
	// SlotsFor overflows int for absurd values; the trees dwarf the ring then.
	if float64(trees)*float64(leaves) < math.MaxInt32 {
		eo := engine.Options{Leaves: leaves, Batch: batch, Slots: engine.SlotsFor(trees, leaves)}
		m.add("batcher", float64(eo.MemoryBytes(g, games.ObservationSize(g), batch)))
	}
	m.add("network scratch", netBytes)
	return &m, nil
}

// netScratch is the CPU backend's reservation for the network netRef on
// g at batches of batch rows (0 when another backend runs, when netRef is
// "random", or when the network does not open: opening it later reports
// the error).
func netScratch(g games.Game, netRef, backend string, batch int) float64 {
	if bs, err := nets.ParseBackendSpec(backend); netRef != "random" && err == nil && (bs.Name == "cpu" || bs.Name == "auto") {
		if net, _, err := nets.OpenNet(netRef, g); err == nil {
			return nets.CPUScratchBytes(net, batch)
		}
	}
	return 0
}

// checkSelfPlayMemory refuses a batched self-play run (selfplay, bench
// search) of cfg whose search trees, game records, batcher ring and
// network scratch would not fit in memory (see selfPlayMemory), naming
// the flags. batch is the largest network batch (0: the backend's
// preferred one, at most the CPU backend's default of 1024 rows). netRef
// and backend are the --net and --backend flags: the CPU backend's
// scratch is counted when it may run.
func checkSelfPlayMemory(g games.Game, netRef, backend string, cfg selfplay.Config, batch int) error {
	mb := batch
	if mb <= 0 {
		mb = 1024
	}
	m, err := selfPlayMemory(g, cfg, mb, netScratch(g, netRef, backend, mb))
	if err != nil {
		return usageError{err.Error()} // settings out of range
	}
	return m.check(fmt.Sprintf("--trees %d --sims %d --leaves %d --net-batch %d", cfg.Trees, cfg.Settings.Sims, cfg.Settings.Leaves, batch))
}

// estimateOpener is the search.EvaluatorOpener of memory estimates: every
// name stands for a network evaluator, without opening one (the network's
// own memory is counted apart from the trees).
type estimateOpener struct{}

func (estimateOpener) OpenEvaluator(games.Game, string) (search.Evaluator, bool, error) {
	return search.Uniform{}, true, nil
}

// mctsMemory estimates the search memory of copies mcts agents of spec
// agentSpec (search.Options.AgentBytes: the node budget, root trees,
// determinizations, reuse, transposition table and the per-edge
// extensions of the rules that keep them). It returns nil for other
// agents and for specs that do not parse (agent.New reports those).
func mctsMemory(g games.Game, agentSpec string, copies int) *memEstimate {
	sp, err := spec.Parse(agentSpec)
	if err != nil || sp.Name != "mcts" {
		return nil
	}
	// An estimate must not open the networks eval= names: the stand-in
	// opener takes any name as a network evaluator that holds nothing
	// (agent.New reports names that are not networks).
	o, err := search.ParseOptions(g, sp, agent.Env{}.With(estimateOpener{}))
	if err != nil {
		return nil
	}
	per, err := o.AgentBytes(g)
	if err != nil {
		return nil
	}
	var m memEstimate
	m.add("search trees", float64(copies)*float64(per))
	return &m
}

// checkAgentMemory refuses agent specs whose search trees (mcts node
// budgets, see mctsMemory) would not fit, when each listed spec (one per
// seat; a spec listed twice counts twice) is instantiated copies times at
// once (agents of concurrent games). Other agents pass.
func checkAgentMemory(g games.Game, specs []string, copies int) error {
	seats := map[string]int{}
	var order []string
	for _, s := range specs {
		if seats[s] == 0 {
			order = append(order, s)
		}
		seats[s]++
	}
	var all memEstimate
	var named []string
	for _, s := range order {
		if m := mctsMemory(g, s, copies*seats[s]); m != nil && m.total() > 0 {
			all.add(strconv.Quote(clip(s)), m.total())
			named = append(named, clip(s))
		}
	}
	if len(named) == 0 {
		return nil
	}
	what := "agent " + strings.Join(named, ", ")
	if copies > 1 {
		what += fmt.Sprintf(" (%d games at once)", copies)
	}
	return all.check(what)
}

// checkZeroMemory refuses a zero run whose iteration (self-play trees,
// records, batcher, network scratch and training batches; see
// zero.Config.MemoryBytes) would not fit, naming the flags. Settings or
// networks that do not load pass: the run reports them.
func checkZeroMemory(c zero.Config) error {
	g, err := games.New(c.Game)
	if err != nil {
		return nil
	}
	net, _, err := nets.OpenNet(c.Net, g)
	if err != nil {
		return nil
	}
	need, err := c.MemoryBytes(g, net)
	if err != nil {
		return nil
	}
	var m memEstimate
	m.add("self-play and training", need)
	return m.check(fmt.Sprintf("--games %d --trees %d --sims %d --batch %d", c.Games, c.Trees, c.SelfPlay.Sims, c.Train.Batch))
}

// checkTrainMemory refuses training batches (train.Options.MemoryBytes)
// that would not fit.
func checkTrainMemory(opt train.Options, net *nets.Net) error {
	var m memEstimate
	m.add("training batches", float64(opt.MemoryBytes(net)))
	return m.check(fmt.Sprintf("--batch %d", opt.Batch))
}
