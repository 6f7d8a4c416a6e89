package zero

import (
	"bytes"
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/canopy-go/canopy/internal/atomicfile"
)

// series is one line of a plot.
type series struct {
	name string
	xy   plotter.XYs
	err  []float64 // symmetric-ish error bars: lo, hi per point, flattened (optional)
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x94, 0x67, 0xbd, 0xff},
}

// writePlots draws the run's curves (loss terms, Elo, solver accuracy)
// as SVG and PNG files in dir, each written atomically.
func writePlots(dir, game string, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var pol, val, tot, elo, solP, solS, solR plotter.XYs
	elo = plotter.XYs{{X: 0, Y: 0}} // iteration 0 is the anchor
	eloErr := []float64{0, 0}
	for _, r := range recs {
		x := float64(r.Iteration)
		pol = append(pol, plotter.XY{X: x, Y: r.Train.FinalLoss.Policy})
		val = append(val, plotter.XY{X: x, Y: r.Train.FinalLoss.Value})
		tot = append(tot, plotter.XY{X: x, Y: r.Train.FinalLoss.Total})
		if r.Elo != nil {
			elo = append(elo, plotter.XY{X: x, Y: r.Elo.Value})
			eloErr = append(eloErr, r.Elo.Value-r.Elo.Lo, r.Elo.Hi-r.Elo.Value)
		}
		if r.Eval.SolverPolicy != nil {
			solP = append(solP, plotter.XY{X: x, Y: 100 * *r.Eval.SolverPolicy})
			solS = append(solS, plotter.XY{X: x, Y: 100 * *r.Eval.SolverSearch})
			if r.Eval.SolverRandom != nil {
				solR = append(solR, plotter.XY{X: x, Y: 100 * *r.Eval.SolverRandom})
			}
		}
	}
	charts := []struct {
		file, title, y string
		lines          []series
	}{
		{"loss", game + ": training loss (last steps of each iteration)", "loss",
			[]series{{name: "total", xy: tot}, {name: "policy", xy: pol}, {name: "value", xy: val}}},
		{"elo", game + ": rating over all evaluation games (Elo scale, iteration 0 = 0, 95% interval)", "Elo",
			[]series{{name: "network", xy: elo, err: eloErr}}},
	}
	if len(solP) > 0 {
		charts = append(charts, struct {
			file, title, y string
			lines          []series
		}{"solver", game + ": optimal moves on the solver-labelled set", "% optimal",
			[]series{{name: "network alone", xy: solP}, {name: "with search", xy: solS}, {name: "random moves", xy: solR}}})
	}
	for _, c := range charts {
		if err := drawChart(filepath.Join(dir, c.file), c.title, c.y, c.lines); err != nil {
			return fmt.Errorf("plot %s: %w", c.file, err)
		}
	}
	return nil
}

// drawChart writes path.svg and path.png.
func drawChart(path, title, ylabel string, lines []series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "iteration"
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	for i, s := range lines {
		if len(s.xy) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(s.xy)
		if err != nil {
			return err
		}
		l.Color, pts.Color = palette[i%len(palette)], palette[i%len(palette)]
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
		if len(s.err) == 2*len(s.xy) {
			eb := make(errPoints, len(s.xy))
			for k, xy := range s.xy {
				eb[k] = errPoint{xy.X, xy.Y, s.err[2*k], s.err[2*k+1]}
			}
			bars, err := plotter.NewYErrorBars(eb)
			if err != nil {
				return err
			}
			bars.Color = palette[i%len(palette)]
			p.Add(bars)
		}
	}
	p.Legend.Top = true
	for _, format := range []string{"svg", "png"} {
		wt, err := p.WriterTo(7*vg.Inch, 4*vg.Inch, format)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(path+"."+format, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

type errPoint struct{ x, y, lo, hi float64 }

// errPoints implements plotter.XYer and plotter.YErrorer.
type errPoints []errPoint

func (e errPoints) Len() int                        { return len(e) }
func (e errPoints) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errPoints) YError(i int) (float64, float64) { return e[i].lo, e[i].hi }
