package plots

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
)

// ParseLogs parses data (file names it in errors) as one or more JSON game
// logs (arena.Log) one after the other: a log file of `canopy play --log`,
// or JSON lines of logs. Each is replayed with arena.ReadLog, which checks
// every move, score and return; an error names the file, the line where
// the bad log starts and the log's number in the file.
func ParseLogs(data []byte, file string) ([]*arena.Log, error) {
	var out []*arena.Log
	dec := json.NewDecoder(bytes.NewReader(data))
	for k := 1; ; k++ {
		start := dec.InputOffset()
		for start < int64(len(data)) && isSpace(data[start]) {
			start++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, inputErrorf(file, lineAt(data, start), "log %d: not JSON: %v", k, err)
		}
		l, _, err := arena.ReadLog(bytes.NewReader(raw))
		if err != nil {
			return nil, inputErrorf(file, lineAt(data, start), "log %d: %v", k, err)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, inputErrorf(file, 0, "no game log in the file (want JSON game logs as written by canopy play --log)")
	}
	return out, nil
}

// plural writes n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Grouping says whose games or chips a chart's series (or panels) are.
type Grouping int

const (
	// ByAgent groups by agent spec (the log's players), so that an agent
	// playing either seat is one group; seats without a name become
	// "player N".
	ByAgent Grouping = iota
	// BySeat groups by seat: "player 0", "player 1", ...
	BySeat
)

// ParseGrouping parses "agent" or "seat".
func ParseGrouping(s string) (Grouping, error) {
	switch s {
	case "agent":
		return ByAgent, nil
	case "seat":
		return BySeat, nil
	}
	return 0, fmt.Errorf("grouping %q: want agent or seat", s)
}

func (by Grouping) label(l *arena.Log, p int) string {
	if by == ByAgent && p < len(l.Players) && l.Players[p] != "" {
		return l.Players[p]
	}
	return fmt.Sprintf("player %d", p)
}

// Lengths are game lengths grouped by outcome.
type Lengths struct {
	// Groups name the series: "won by G" for each winner group G (in
	// order of name), then "draw" (no single highest return) if any.
	Groups []string
	// Values[g] are the lengths (player decisions: moves that are not
	// chance outcomes) of group g's games, in log order.
	Values [][]int
	// Unfinished counts logs without returns, left out.
	Unfinished int
}

// GameLengths groups the finished games of logs by winner: the seat with
// the single highest return, named by by.
func GameLengths(logs []*arena.Log, by Grouping) Lengths {
	const draw = "draw"
	byGroup := map[string][]int{}
	var out Lengths
	for _, l := range logs {
		if l.Returns == nil {
			out.Unfinished++
			continue
		}
		n := 0
		for _, m := range l.Moves {
			if m.Player >= 0 {
				n++
			}
		}
		g := draw
		if w := winner(l.Returns); w >= 0 {
			g = "won by " + by.label(l, w)
		}
		byGroup[g] = append(byGroup[g], n)
	}
	for g := range byGroup {
		if g != draw {
			out.Groups = append(out.Groups, g)
		}
	}
	sort.Strings(out.Groups)
	if _, ok := byGroup[draw]; ok {
		out.Groups = append(out.Groups, draw)
	}
	for _, g := range out.Groups {
		out.Values = append(out.Values, byGroup[g])
	}
	return out
}

// winner returns the seat with the single highest return, or -1.
func winner(returns []float64) int {
	w := -1
	best := math.Inf(-1)
	tie := false
	for p, r := range returns {
		switch {
		case r > best:
			w, best, tie = p, r, false
		case r == best:
			tie = true
		}
	}
	if tie {
		return -1
	}
	return w
}

// maxBins bounds the bins of a length histogram.
const maxBins = 40

// Bins returns the histogram bins of the lengths: [Lo + i*Width, Lo +
// (i+1)*Width) for i < N, Width a whole number chosen so that N <=
// maxBins, Lo a multiple of Width. N is 0 without lengths.
func (ls Lengths) Bins() (lo, width, n int) {
	minL, maxL := math.MaxInt, math.MinInt
	for _, vs := range ls.Values {
		for _, v := range vs {
			minL, maxL = min(minL, v), max(maxL, v)
		}
	}
	if minL > maxL {
		return 0, 1, 0
	}
	width = (maxL - minL + maxBins) / maxBins // ceil((span+1)/maxBins)
	lo = minL / width * width
	n = (maxL-lo)/width + 1
	return lo, width, n
}

// LengthFigure draws the lengths as overlaid histograms (named "lengths"),
// one colour per group. Lengths are whole numbers: each bin is centred on
// its whole numbers ([v-0.5, v+width-0.5)) and the ticks are whole.
func LengthFigure(game string, ls Lengths) *Figure {
	lo, width, nb := ls.Bins()
	title := game + ": game length by outcome\n(player decisions, chance moves not counted"
	if ls.Unfinished > 0 {
		title += "; " + plural(ls.Unfinished, "unfinished game") + " left out"
	}
	title += ")"
	return &Figure{Name: "lengths", width: 7 * vg.Inch, height: 4 * vg.Inch, build: func() ([]panel, error) {
		p := panel{Plot: plot.New()}
		p.Title.Text = title
		p.X.Label.Text = "game length"
		p.X.Tick.Marker = intTicks{}
		p.Y.Label.Text = "games"
		p.Y.Tick.Marker = intTicks{}
		p.Add(plotter.NewGrid())
		for g, vs := range ls.Values {
			counts := make([]float64, nb)
			for _, v := range vs {
				counts[(v-lo)/width]++
			}
			h := &plotter.Histogram{Width: float64(width), LineStyle: plotter.DefaultLineStyle}
			c := colorOf(g)
			h.FillColor = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x99} // see-through where groups overlap
			h.LineStyle.Color = colorOf(g)
			h.LineStyle.Width = vg.Points(0.5)
			for i, k := range counts {
				if k > 0 {
					x := float64(lo+i*width) - 0.5
					h.Bins = append(h.Bins, plotter.HistogramBin{Min: x, Max: x + float64(width), Weight: k})
				}
			}
			p.Add(h)
			p.addKey(fmt.Sprintf("%s (%s)", ls.Groups[g], plural(len(vs), "game")), h)
		}
		p.Y.Min = 0
		pad(&p.Y, 0, 0.05)
		if nb == 0 {
			p.Title.Text = game + ": game length by outcome: no finished games"
		} else {
			p.X.Min, p.X.Max = float64(lo)-0.5-0.02*float64(nb*width), float64(lo+nb*width)-0.5+0.02*float64(nb*width)
		}
		return []panel{p}, nil
	}}
}

// Placements are chip counts per board cell.
type Placements struct {
	Rows, Cols int
	// Groups name the panels (see Grouping), in order of first
	// appearance in the logs.
	Groups []string
	// Counts[g][r*Cols+c] is the number of chips group g placed on the
	// cell in row r (from the top) and column c (from the left).
	Counts [][]int
	Games  []int // games each group played
	// RowNames and ColNames label the rows (top first) and columns.
	RowNames, ColNames []string
}

// Total returns the chips group g placed.
func (pl *Placements) Total(g int) int {
	n := 0
	for _, c := range pl.Counts[g] {
		n += c
	}
	return n
}

// SequencePlacements counts the chips placed per square of Sequence's
// 10x10 board (rows 10..1 from the top, columns a..j) over logs, which
// must all be Sequence logs, grouped by by. A chip is placed when a
// player's own-chip plane (Sequence's observation plane 0) gains a square
// on that player's move; chips removed by one-eyed jacks are not counted
// off.
func SequencePlacements(logs []*arena.Log, by Grouping) (*Placements, error) {
	pl := &Placements{Rows: 10, Cols: 10}
	for r := range 10 {
		pl.RowNames = append(pl.RowNames, fmt.Sprint(10-r))
		pl.ColNames = append(pl.ColNames, string(rune('a'+r)))
	}
	index := map[string]int{}
	for k, l := range logs {
		if name, _, _ := strings.Cut(l.Game, ":"); name != "sequence" {
			return nil, fmt.Errorf("log %d is a game of %s: chip placements are drawn for sequence only", k+1, l.Game)
		}
		g, err := games.New(l.Game)
		if err != nil {
			return nil, fmt.Errorf("log %d: %v", k+1, err)
		}
		if sh := g.ObservationShape(); len(sh) != 3 || sh[1] != pl.Rows || sh[2] != pl.Cols {
			return nil, fmt.Errorf("log %d: %s observations are %v, not planes of 10x10", k+1, l.Game, sh)
		}
		groupOf := make([]int, g.NumPlayers())
		for p := range groupOf {
			name := by.label(l, p)
			i, ok := index[name]
			if !ok {
				i = len(pl.Groups)
				index[name] = i
				pl.Groups = append(pl.Groups, name)
				pl.Counts = append(pl.Counts, make([]int, pl.Rows*pl.Cols))
				pl.Games = append(pl.Games, 0)
			}
			if !contains(groupOf[:p], i) {
				pl.Games[i]++
			}
			groupOf[p] = i
		}
		cells := pl.Rows * pl.Cols
		before := make([]float32, games.ObservationSize(g))
		after := make([]float32, len(before))
		s := g.NewInitialState()
		for i, m := range l.Moves {
			// ReadLog replayed these moves already: none fails here.
			p := s.CurrentPlayer()
			a, err := s.ParseAction(m.Action)
			if err != nil {
				return nil, fmt.Errorf("log %d: move %d: %v", k+1, i+1, err)
			}
			if p < 0 {
				s.Apply(a)
				continue
			}
			s.Observation(p, before)
			s.Apply(a)
			s.Observation(p, after)
			for c := range cells {
				if after[c] > 0.5 && before[c] < 0.5 {
					pl.Counts[groupOf[p]][c]++
				}
			}
		}
	}
	if len(pl.Groups) == 0 {
		return nil, errors.New("no game logs")
	}
	return pl, nil
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
