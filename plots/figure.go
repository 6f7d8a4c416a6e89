package plots

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

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

// DefaultDPI is the resolution of PNG renders unless Size says otherwise:
// a 7 x 4 inch chart is 672 x 384 pixels.
const DefaultDPI = 96

// Size is the canvas a figure is drawn on. Zero fields keep the figure's
// own choice.
type Size struct {
	Width, Height vg.Length
	DPI           int // PNG only: pixels per inch
}

// Figure is a chart ready to render: one plot, or a row of panels drawn
// side by side with aligned axes. It holds its data, not gonum plots (whose
// Draw changes them), so it is immutable and Render may run concurrently.
//
// Layout: a panel's title is wrapped to the panel's width, and its
// legend is drawn outside the data area, to the right of the plot where
// that leaves the plot most of the width, else in columns below it.
type Figure struct {
	// Name is the figure's file base name ("loss", "elo", ...): WriteFiles
	// writes Name.svg and Name.png.
	Name          string
	width, height vg.Length
	dpi           int
	build         func() ([]panel, error) // fresh panels, left to right
}

// panel is one plot and its legend's keys, which layout draws outside the
// plot's data area (the plot's own Legend stays empty).
type panel struct {
	*plot.Plot
	keys []key
}

// key is one legend entry.
type key struct {
	name   string
	thumbs []plot.Thumbnailer
}

func (p *panel) addKey(name string, thumbs ...plot.Thumbnailer) {
	p.keys = append(p.keys, key{name, thumbs})
}

// Size returns the figure's canvas.
func (f *Figure) Size() Size { return Size{f.width, f.height, cmp.Or(f.dpi, DefaultDPI)} }

// Resized returns a copy of f drawn on a canvas of s's non-zero fields.
// Titles rewrap and legends move to fit the new size.
func (f *Figure) Resized(s Size) *Figure {
	out := *f
	out.width, out.height, out.dpi = cmp.Or(s.Width, f.width), cmp.Or(s.Height, f.height), cmp.Or(s.DPI, f.dpi)
	return &out
}

// Render writes the figure in format ("svg" or "png") to w.
func (f *Figure) Render(w io.Writer, format string) error {
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case "svg":
		c = vgsvg.New(f.width, f.height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(cmp.Or(f.dpi, DefaultDPI)))}
	default:
		return fmt.Errorf("figure %s: unknown format %q (want svg or png)", f.Name, format)
	}
	if err := f.draw(draw.New(c)); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

// draw lays the figure out on dc and draws it.
func (f *Figure) draw(dc draw.Canvas) error {
	ps, err := f.layout(dc)
	if err != nil {
		return err
	}
	for _, p := range ps {
		p.plot.Draw(p.area)
		for i := range p.legends {
			p.legends[i].Draw(p.legendAreas[i])
		}
	}
	return nil
}

// placed is one panel laid out: the plot drawn in area, its legend as
// columns, legends[i] drawn in legendAreas[i], outside the data area.
type placed struct {
	plot        *plot.Plot
	area        draw.Canvas
	keys        []key
	legends     []plot.Legend
	legendAreas []draw.Canvas
}

// legendPad is the space between a legend and the plot; margin the
// space kept clear at the canvas's edges (gonum places a rotated axis
// label and the last legend entry at the very edge, their glyphs'
// ascent or descent reaching past it).
const (
	legendPad = vg.Length(6) // points
	margin    = vg.Length(3)
)

// layout builds the panels and places them and their legends on dc.
func (f *Figure) layout(dc draw.Canvas) ([]placed, error) {
	panels, err := f.build()
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	out := make([]placed, len(panels))
	dc = draw.Crop(dc, margin, -margin, margin, -margin)
	areas := []draw.Canvas{dc}
	if len(panels) > 1 {
		w := (dc.Max.X - dc.Min.X) / vg.Length(len(panels))
		for _, p := range panels {
			wrapTitle(p.Plot, w-4*vg.Millimeter)
		}
		tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter, PadTop: vg.Millimeter, PadBottom: vg.Millimeter,
			PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
		plots := make([]*plot.Plot, len(panels))
		for i, p := range panels {
			plots[i] = p.Plot
		}
		areas = plot.Align([][]*plot.Plot{plots}, tiles, dc)[0]
	}
	for i, p := range panels {
		out[i] = placeLegend(p, areas[i])
	}
	return out, nil
}

// placeLegend wraps p's title and places its legend in area: one column
// right of the plot when that leaves the plot 72% of the width, else as
// many columns below it as fit. (gonum's Legend.Rectangle mirrors Left,
// so every legend area is exactly as wide as its legend.)
func placeLegend(p panel, area draw.Canvas) placed {
	out := placed{plot: p.Plot, area: area, keys: p.keys}
	wrapTitle(p.Plot, area.Max.X-area.Min.X-2*vg.Millimeter)
	if len(p.keys) == 0 {
		return out
	}
	width := area.Max.X - area.Min.X
	// Names too long for the width lose their middle.
	out.keys = slices.Clone(p.keys)
	sty := plot.NewLegend().TextStyle
	thumb := plot.NewLegend().ThumbnailWidth
	for i, k := range out.keys {
		out.keys[i].name = shorten(sty, k.name, width-thumb-4*legendPad)
	}
	legend := func(keys []key) plot.Legend {
		l := plot.NewLegend()
		l.Top, l.Left = true, true
		l.Padding = 1.5
		for _, k := range keys {
			l.Add(k.name, k.thumbs...)
		}
		return l
	}
	size := func(l plot.Legend) vg.Point { return l.Rectangle(area).Size() }
	descent := sty.FontExtents().Descent
	p.keys = out.keys
	if all := legend(p.keys); size(all).X+legendPad <= 0.28*width {
		out.area.Max.X -= size(all).X + legendPad
		wrapTitle(p.Plot, out.area.Max.X-out.area.Min.X-2*vg.Millimeter)
		data := p.DataCanvas(out.area)
		la := draw.Canvas{Canvas: area.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: out.area.Max.X + legendPad, Y: data.Min.Y}, Max: vg.Point{X: area.Max.X, Y: data.Max.Y}}}
		la.Min.X = la.Max.X - size(all).X
		out.legends, out.legendAreas = []plot.Legend{all}, []draw.Canvas{la}
		return out
	}
	// Below: the most columns (of consecutive keys) that fit the width.
	for cols := min(len(p.keys), 4); cols >= 1; cols-- {
		rows := (len(p.keys) + cols - 1) / cols
		var ls []plot.Legend
		total := vg.Length(0)
		for k := 0; k < len(p.keys); k += rows {
			l := legend(p.keys[k:min(k+rows, len(p.keys))])
			ls = append(ls, l)
			total += size(l).X + 2*legendPad
		}
		if total > width && cols > 1 {
			continue
		}
		h := vg.Length(0)
		for _, l := range ls {
			h = max(h, size(l).Y)
		}
		out.area.Min.Y += h + descent + legendPad
		x := area.Min.X + legendPad
		for _, l := range ls {
			s := size(l)
			top := area.Min.Y + descent + h
			out.legends = append(out.legends, l)
			out.legendAreas = append(out.legendAreas, draw.Canvas{Canvas: area.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: top - s.Y}, Max: vg.Point{X: x + s.X, Y: top}}})
			x += s.X + 2*legendPad
		}
		return out
	}
	return out
}

// shorten returns s, or s with its middle replaced by "…" so that it is at
// most width wide in sty.
func shorten(sty draw.TextStyle, s string, width vg.Length) string {
	if sty.Width(s) <= width {
		return s
	}
	r := []rune(s)
	for n := len(r) - 1; n > 2; n-- {
		t := string(r[:n/2]) + "…" + string(r[len(r)-(n-n/2):])
		if sty.Width(t) <= width {
			return t
		}
	}
	return string(r[:1]) + "…"
}

// wrapTitle breaks p's title into lines at spaces so that every line is at
// most width wide (a single word wider than that stays whole). Existing
// line breaks are kept.
func wrapTitle(p *plot.Plot, width vg.Length) {
	sty := p.Title.TextStyle
	var lines []string
	for _, para := range strings.Split(p.Title.Text, "\n") {
		line := ""
		for _, w := range strings.Fields(para) {
			switch {
			case line == "":
				line = w
			case sty.Width(line+" "+w) <= width:
				line += " " + w
			default:
				lines = append(lines, line)
				line = w
			}
		}
		lines = append(lines, line)
	}
	p.Title.Text = strings.Join(lines, "\n")
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
// The title's lines (separated by newlines) are wrapped to fit.
func lineFigure(name, title, xlabel, ylabel string, series []Series) *Figure {
	return &Figure{Name: name, width: 7 * vg.Inch, height: 4 * vg.Inch, build: func() ([]panel, error) {
		p := panel{Plot: plot.New()}
		p.Title.Text = title
		p.X.Label.Text = xlabel
		p.X.Tick.Marker = intTicks{}
		p.Y.Label.Text = ylabel
		p.Add(plotter.NewGrid())
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
			p.addKey(s.Name, l, pts)
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
		pad(&p.Y, 0.05, 0.05)
		return []panel{p}, nil
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
