package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/spec"
)

// Memory estimates. A command whose memory grows with a flag (trees,
// simulations, batch sizes, population sizes, node budgets) estimates what
// it is about to allocate and refuses, with the figure, when that exceeds
// memLimitShare of the machine's physical memory: without the check the Go
// runtime dies with "fatal error: out of memory" (exit status 2, as if the
// command line were wrong) or the machine starts swapping.
//
// The estimates count the large arrays that are allocated up front and
// grow with the flags: search arenas (search.NodeBytes per node,
// search.EdgeBytes per edge), batcher rings (rows x (input + policy +
// value) float32s plus a slot record), network scratch and per-game
// records. Everything else is small beside them at the sizes where the
// check matters. The limit is generous on purpose: the check is there to
// turn a crash into a clear error, not to second-guess sizes that fit.

// memLimitShare is the share of physical memory a command may plan to use.
const memLimitShare = 0.8

// fallbackMemory is assumed when the machine's memory cannot be read
// (not Linux, or /proc unreadable): 16 GiB.
const fallbackMemory = 16 << 30

// batcherSlotBytes is the bookkeeping of one batcher ring slot besides its
// rows: the slot record (96 bytes) and its completion channel (~96).
const batcherSlotBytes = 192

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

// arenaBytes is the size of a search arena of nodes nodes and edges edges.
func arenaBytes(nodes, edges float64) float64 {
	return nodes*float64(search.NodeBytes) + edges*float64(search.EdgeBytes)
}

// nextPow2 is the smallest power of two >= n (n >= 1), in float64.
func nextPow2(n float64) float64 {
	return math.Pow(2, math.Ceil(math.Log2(math.Max(n, 1))))
}

// batcherBytes is the ring of a batcher for g with the given slots and
// largest batch (batcher.New: a power of two >= max(slots, 2*batch, 4)
// slots, each one row of input, policy and value floats).
func batcherBytes(g games.Game, slots, batch float64) float64 {
	n := nextPow2(math.Max(math.Max(slots, 2*batch), 4))
	return n * (4*float64(games.ObservationSize(g)+g.NumActions()+1) + batcherSlotBytes)
}

// recordBytes is one self-play game record of the longest possible game
// (GameRecord: observation and policy float32s, legal-mask bytes, value
// and ply per position).
func recordBytes(g games.Game) float64 {
	perPos := 4*float64(games.ObservationSize(g)) + 5*float64(g.NumActions()) + 8
	return float64(g.MaxGameLength()) * perPos
}

// selfPlayMemory estimates the memory of batched self-play (selfplay,
// bench search) with trees games at once (already at most the number of
// games), sims simulations per move over det determinized trees per game
// (hidden-information games; others search one tree), leaves leaves in
// flight per tree and a batcher of up to batch rows. netBytes is the
// backend's own reservation (0 for none, see nets.CPUScratchBytes).
//
// Per tree, self-play sizes the arena at sims/det + leaves + 16 nodes with
// min(actions, 64) edges each (selfplay.Run); the batcher ring holds
// engine.SlotsFor(trees, leaves) rows (batcher.New).
func selfPlayMemory(g games.Game, trees, sims, leaves, det, batch int, netBytes float64) *memEstimate {
	k := 1.0
	if _, ok := g.NewInitialState().(games.Resampler); ok && g.Type().Information == games.ImperfectInformation {
		k = float64(max(det, 1))
	}
	nodes := math.Max(math.Floor(float64(sims)/k), 1) + float64(leaves) + 16
	edges := nodes * float64(min(g.NumActions(), 64))
	tf := float64(trees)
	var m memEstimate
	m.add("search trees", tf*k*arenaBytes(nodes, edges))
	m.add("game records", tf*recordBytes(g))
	// SlotsFor in float64: trees*leaves overflows int for absurd values.
	slots := tf*float64(max(leaves, 1)) + tf + 64
	if tf*float64(leaves) < math.MaxInt32 {
		slots = float64(engine.SlotsFor(trees, leaves))
	}
	m.add("batcher", batcherBytes(g, slots, float64(batch)))
	m.add("network scratch", netBytes)
	return &m
}

// checkSelfPlayMemory refuses a batched self-play run (selfplay, bench
// search) whose search trees, game records, batcher ring and network
// scratch would not fit in memory (see selfPlayMemory), naming the flags.
// trees is the number of games searched at once, det the determinizations
// per move (used by hidden-information games only), batch the largest
// network batch (0: the backend's preferred one, at most the CPU
// backend's default of 1024 rows). netRef and backend are the --net and
// --backend flags: the CPU backend's scratch is counted when it may run
// (backend cpu or auto and a network other than "random").
func checkSelfPlayMemory(g games.Game, netRef, backend string, trees, sims, leaves, det, batch int) error {
	mb := batch
	if mb <= 0 {
		mb = 1024
	}
	var netBytes float64
	if bs, err := nets.ParseBackendSpec(backend); netRef != "random" && err == nil && (bs.Name == "cpu" || bs.Name == "auto") {
		if net, _, err := nets.OpenNet(netRef, g); err == nil {
			netBytes = nets.CPUScratchBytes(net, mb)
		} // else opening the network reports the error
	}
	m := selfPlayMemory(g, trees, sims, leaves, det, mb, netBytes)
	return m.check(fmt.Sprintf("--trees %d --sims %d --leaves %d --batch %d", trees, sims, leaves, batch))
}

// mctsMemory estimates the search memory of copies mcts agents of spec
// agentSpec (its node budget, root trees, determinizations, reuse and
// transposition table; search.New and search.NewAgent size them so). It
// returns nil for other agents and for specs that do not parse (agent.New
// reports those).
func mctsMemory(g games.Game, agentSpec string, copies int) *memEstimate {
	sp, err := spec.Parse(agentSpec)
	if err != nil || sp.Name != "mcts" {
		return nil
	}
	d := search.DefaultOptions()
	sims := sp.Int("sims", d.Sims)
	tm := sp.Duration("time", 0)
	if sp.Has("time") && !sp.Has("sims") {
		sims = 0
	}
	nodes := sp.Int("nodes", 0)
	root := max(sp.Int("root", 1), 1)
	det := sp.Int("det", -1)
	reuse, tt := sp.Bool("reuse", false), sp.Bool("tt", false)
	if det < 0 { // the option's default: 8 for hidden information
		det = 0
		if g.Type().Information == games.ImperfectInformation {
			det = 8
		}
	}
	trees := float64(root)
	perTreeSims := sims
	if root > 1 && sims > 0 {
		perTreeSims = max(1, sims/root)
	}
	if det > 0 && perTreeSims > 0 {
		perTreeSims = max(1, perTreeSims/det)
	}
	maxNodes := float64(nodes)
	if nodes <= 0 {
		maxNodes = 1 << 20
		if perTreeSims > 0 && tm == time.Duration(0) {
			maxNodes = math.Min(maxNodes, float64(perTreeSims)+16)
		}
	}
	maxEdges := math.Min(maxNodes*float64(min(g.NumActions()+g.NumPlayers(), 128)), 1<<24)
	per := arenaBytes(maxNodes, maxEdges)
	if reuse {
		per += arenaBytes(maxNodes, maxEdges) + 4*maxNodes // the spare arena and the remap table
	}
	if tt {
		per += 32 * nextPow2(2*maxNodes) // ttEntry, 28 bytes padded
	}
	var m memEstimate
	m.add("search trees", float64(copies)*trees*per)
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
