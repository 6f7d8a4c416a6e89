package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/canopy-go/canopy/internal/atomicfile"
)

// Formats are the file formats a Figure renders to.
var Formats = []string{"svg", "png"}

// Figure is a chart ready to render: one plot, or a row of panels drawn
// side by side with aligned axes. It holds its data, not gonum plots (whose
// Draw changes them), so it is immutable and Render may run concurrently.
type Figure struct {
	// Name is the figure's file base name ("loss", "elo", ...): WriteFiles
	// writes Name.svg and Name.png.
	Name          string
	width, height vg.Length
	build         func() ([]*plot.Plot, error) // fresh panels, left to right
}

// Render writes the figure in format ("svg" or "png") to w.
func (f *Figure) Render(w io.Writer, format string) error {
	panels, err := f.build()
	if err != nil {
		return fmt.Errorf("figure %s: %w", f.Name, err)
	}
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "svg":
		c = vgsvg.New(f.width, f.height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(f.width, f.height)}
	default:
		return fmt.Errorf("figure %s: unknown format %q (want svg or png)", f.Name, format)
	}
	dc := draw.New(c)
	if len(panels) == 1 {
		panels[0].Draw(dc)
	} else {
		tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter, PadTop: vg.Millimeter, PadBottom: vg.Millimeter,
			PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
		for i, cv := range plot.Align([][]*plot.Plot{panels}, tiles, dc)[0] {
			panels[i].Draw(cv)
		}
	}
	_, err = c.WriteTo(w)
	return err
}

// Bytes renders the figure in format.
func (f *Figure) Bytes(format string) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.Render(&buf, format); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteFiles writes every figure into dir (created if needed) in each of
// formats (Formats when none are given), each file atomically. It returns
// the paths written.
func WriteFiles(dir string, figs []*Figure, formats ...string) ([]string, error) {
	if len(formats) == 0 {
		formats = Formats
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range figs {
		for _, format := range formats {
			data, err := f.Bytes(format)
			if err != nil {
				return paths, err
			}
			p := filepath.Join(dir, f.Name+"."+format)
			if err := atomicfile.WriteFile(p, data); err != nil {
				return paths, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// seriesColors colours series in order (the tab10 colours).
var seriesColors = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff},
	{0xff, 0x7f, 0x0e, 0xff}, {0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff},
	{0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff},
	{0x17, 0xbe, 0xcf, 0xff},
}

func colorOf(i int) color.RGBA { return seriesColors[i%len(seriesColors)] }

// Series is one line of a line chart: points, and optionally asymmetric
// error bars (Lo[i] <= Y[i] <= Hi[i]).
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64 // nil for no error bars
}

// lineFigure draws series as lines with points (and error bars where
// given) against x. Series without points are left out of the legend.
func lineFigure(name, title, xlabel, ylabel string, series []Series) *Figure {
	return &Figure{Name: name, width: 7 * vg.Inch, height: 4 * vg.Inch, build: func() ([]*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = xlabel
		p.X.Tick.Marker = intTicks{}
		p.Y.Label.Text = ylabel
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		for i, s := range series {
			if len(s.X) == 0 {
				continue
			}
			xy := make(plotter.XYs, len(s.X))
			for k := range xy {
				xy[k] = plotter.XY{X: s.X[k], Y: s.Y[k]}
			}
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			l.Color, pts.Color = colorOf(i), colorOf(i)
			p.Add(l, pts)
			p.Legend.Add(s.Name, l, pts)
			if s.Lo != nil {
				eb := make(errPoints, len(xy))
				for k := range xy {
					eb[k] = errPoint{xy[k].X, xy[k].Y, xy[k].Y - s.Lo[k], s.Hi[k] - xy[k].Y}
				}
				bars, err := plotter.NewYErrorBars(eb)
				if err != nil {
					return nil, fmt.Errorf("series %q: %w", s.Name, err)
				}
				bars.Color = colorOf(i)
				p.Add(bars)
			}
		}
		pad(&p.X, 0.03, 0.03)
		pad(&p.Y, 0.03, 0.15) // room for the legend
		return []*plot.Plot{p}, nil
	}}
}

// pad widens a's range by the fractions lo and hi of its span (of 1 when
// the span is 0), so that points and error bars at the ends stay clear
// of the frame.
func pad(a *plot.Axis, lo, hi float64) {
	d := a.Max - a.Min
	if !(d > 0) {
		d = 1
	}
	a.Min -= lo * d
	a.Max += hi * d
}

// intTicks marks whole numbers only (iterations, updates): gonum's
// default ticks where their labelled steps are whole, else every whole
// number in range.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Value != math.Trunc(t.Value) {
			if t.Label != "" {
				out = nil // a fractional labelled step: count by ones below
				break
			}
			continue
		}
		if t.Label != "" {
			t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
		}
		out = append(out, t)
	}
	if out != nil {
		return out
	}
	for v := math.Ceil(lo); v <= hi; v++ {
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return out
}

type errPoint struct{ x, y, lo, hi float64 }

// errPoints implements plotter.XYer, plotter.YErrorer and
// plotter.XErrorer (the same lengths below and above, on either axis).
type errPoints []errPoint

func (e errPoints) Len() int                        { return len(e) }
func (e errPoints) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errPoints) YError(i int) (float64, float64) { return e[i].lo, e[i].hi }
func (e errPoints) XError(i int) (float64, float64) { return e[i].lo, e[i].hi }
