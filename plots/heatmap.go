package plots

import (
	"fmt"
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/brewer"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// cellLabelSize is the font size of the counts written in heatmap cells
// (smaller than the axes' tick labels).
const cellLabelSize = 7

// PlacementFigure draws pl as heatmaps (named "heatmap"), one panel per
// group side by side, as in study 000's Figure 4: a cell's shade is the
// share of the group's chips placed there, on one scale for all panels
// (darker: more often), and its count is written in it (empty cells stay
// blank).
func PlacementFigure(game string, pl *Placements) *Figure {
	maxShare := 0.0
	for g := range pl.Groups {
		if t := pl.Total(g); t > 0 {
			for _, c := range pl.Counts[g] {
				maxShare = max(maxShare, float64(c)/float64(t))
			}
		}
	}
	n := max(1, len(pl.Groups))
	return &Figure{Name: "heatmap", width: vg.Length(n) * 4.5 * vg.Inch, height: 5 * vg.Inch, build: func() ([]panel, error) {
		pal, err := brewer.GetPalette(brewer.TypeAny, "Blues", 9)
		if err != nil {
			return nil, err
		}
		var panels []panel
		for g, name := range pl.Groups {
			p, err := placementPanel(game, pl, g, name, pal, maxShare)
			if err != nil {
				return nil, err
			}
			panels = append(panels, panel{Plot: p})
		}
		return panels, nil
	}}
}

func placementPanel(game string, pl *Placements, g int, name string, pal palette.Palette, maxShare float64) (*plot.Plot, error) {
	total := pl.Total(g)
	grid := cellGrid{pl: pl, g: g, total: total}
	hm := plotter.NewHeatMap(grid, pal)
	hm.Min, hm.Max = 0, max(maxShare, 1e-9)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s\n%d chips in %d games", game, name, total, pl.Games[g])
	p.Add(hm)
	// Counts, dark text on light cells and light text on dark ones.
	var light, dark plotter.XYLabels
	for r := range pl.Rows {
		for c := range pl.Cols {
			k := pl.Counts[g][r*pl.Cols+c]
			if k == 0 {
				continue
			}
			l := &dark
			if float64(k)/float64(total) > 0.6*maxShare {
				l = &light
			}
			l.XYs = append(l.XYs, plotter.XY{X: float64(c), Y: float64(pl.Rows - 1 - r)})
			l.Labels = append(l.Labels, strconv.Itoa(k))
		}
	}
	for _, set := range []struct {
		l   plotter.XYLabels
		col color.Color
	}{{dark, color.Black}, {light, color.White}} {
		if len(set.l.XYs) == 0 {
			continue
		}
		labels, err := plotter.NewLabels(set.l)
		if err != nil {
			return nil, err
		}
		for i := range labels.TextStyle {
			ts := &labels.TextStyle[i]
			ts.Font.Size = cellLabelSize
			ts.Color = set.col
			ts.XAlign, ts.YAlign = draw.XCenter, draw.YCenter
		}
		p.Add(labels)
	}
	p.X.Tick.Marker = namedTicks(pl.ColNames, false)
	p.Y.Tick.Marker = namedTicks(pl.RowNames, true)
	p.X.Min, p.X.Max = -0.5, float64(pl.Cols)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(pl.Rows)-0.5
	return p, nil
}

// cellGrid is one group's counts as a plotter.GridXYZ of shares: column c
// at X = c, board row r (from the top) at Y = Rows-1-r.
type cellGrid struct {
	pl    *Placements
	g     int
	total int
}

func (cg cellGrid) Dims() (c, r int) { return cg.pl.Cols, cg.pl.Rows }
func (cg cellGrid) Z(c, r int) float64 {
	if cg.total == 0 {
		return 0
	}
	return float64(cg.pl.Counts[cg.g][(cg.pl.Rows-1-r)*cg.pl.Cols+c]) / float64(cg.total)
}
func (cg cellGrid) X(c int) float64 { return float64(c) }
func (cg cellGrid) Y(r int) float64 { return float64(r) }

// namedTicks labels positions 0..len(names)-1 with names (reversed: the
// first name at the top, for rows).
func namedTicks(names []string, reversed bool) plot.Ticker {
	return plot.TickerFunc(func(_, _ float64) []plot.Tick {
		ts := make([]plot.Tick, len(names))
		for i, n := range names {
			v := i
			if reversed {
				v = len(names) - 1 - i
			}
			ts[i] = plot.Tick{Value: float64(v), Label: n}
		}
		return ts
	})
}
