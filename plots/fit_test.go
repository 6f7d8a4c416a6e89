package plots

import (
	"fmt"
	"image/color"
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/rl"
)

// The fit test: every chart kind, drawn at two sizes, keeps its text on
// the canvas and its legend off the data. Text boxes are measured where
// the library draws them (every FillString the canvas receives, through
// the canvas's transforms, sized by the font face's own width and
// extents); legend boxes are gonum's Legend.Rectangle of the areas the
// layout gave the legends, and data are gonum's DataCanvas and the
// plotters' GlyphBoxes.

// textBox is a string drawn on the canvas and its bounding box in canvas
// coordinates.
type textBox struct {
	text string
	box  vg.Rectangle
}

// recorder is a vg.Canvas that draws on an image canvas and records the
// box of every string drawn, tracking Push, Pop, Translate, Rotate and
// Scale as an affine matrix (x' = a*x + b*y + e, y' = c*x + d*y + f).
type recorder struct {
	vg.CanvasSizer
	m     [6]float64
	stack [][6]float64
	texts []textBox
}

func newRecorder(c vg.CanvasSizer) *recorder {
	return &recorder{CanvasSizer: c, m: [6]float64{1, 0, 0, 1, 0, 0}}
}

func (r *recorder) apply(x, y float64) (float64, float64) {
	m := r.m
	return m[0]*x + m[1]*y + m[4], m[2]*x + m[3]*y + m[5]
}

// then composes the current matrix with n applied first.
func (r *recorder) then(n [6]float64) {
	m := r.m
	r.m = [6]float64{m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3], m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[0]*n[4] + m[1]*n[5] + m[4], m[2]*n[4] + m[3]*n[5] + m[5]}
}

func (r *recorder) Push() { r.stack = append(r.stack, r.m); r.CanvasSizer.Push() }
func (r *recorder) Pop() {
	r.m = r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
	r.CanvasSizer.Pop()
}
func (r *recorder) Translate(pt vg.Point) {
	r.then([6]float64{1, 0, 0, 1, float64(pt.X), float64(pt.Y)})
	r.CanvasSizer.Translate(pt)
}
func (r *recorder) Rotate(a float64) {
	s, c := math.Sincos(a)
	r.then([6]float64{c, -s, s, c, 0, 0})
	r.CanvasSizer.Rotate(a)
}
func (r *recorder) Scale(x, y float64) {
	r.then([6]float64{x, 0, 0, y, 0, 0})
	r.CanvasSizer.Scale(x, y)
}

func (r *recorder) FillString(f font.Face, pt vg.Point, text string) {
	ext := f.Extents()
	x0, x1 := float64(pt.X), float64(pt.X+f.Width(text))
	y0, y1 := float64(pt.Y-ext.Descent), float64(pt.Y+ext.Ascent)
	box := vg.Rectangle{Min: vg.Point{X: vg.Length(math.Inf(1)), Y: vg.Length(math.Inf(1))}, Max: vg.Point{X: vg.Length(math.Inf(-1)), Y: vg.Length(math.Inf(-1))}}
	for _, c := range [][2]float64{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
		x, y := r.apply(c[0], c[1])
		box.Min.X, box.Min.Y = min(box.Min.X, vg.Length(x)), min(box.Min.Y, vg.Length(y))
		box.Max.X, box.Max.Y = max(box.Max.X, vg.Length(x)), max(box.Max.Y, vg.Length(y))
	}
	r.texts = append(r.texts, textBox{text, box})
	r.CanvasSizer.FillString(f, pt, text)
}

// overlaps reports whether a and b share more than a sliver (tol on each
// side).
func overlaps(a, b vg.Rectangle, tol vg.Length) bool {
	return a.Min.X+tol < b.Max.X && b.Min.X+tol < a.Max.X && a.Min.Y+tol < b.Max.Y && b.Min.Y+tol < a.Max.Y
}

// everyChartKind returns one figure of every kind, with long names where
// names appear.
func everyChartKind(t *testing.T) []*Figure {
	t.Helper()
	its, err := ParseZeroMetrics([]byte(zeroLines), "m.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// A long opponent name on the scores chart.
	for i := range its {
		for k := range its[i].Scores {
			if its[i].Scores[k].Opponent == "random" {
				its[i].Scores[k].Opponent = "mcts:sims=800,c=1.4,rollouts=random"
			}
		}
	}
	figs := ZeroFigures("connect4:rows=6,cols=7", its)
	var ms []rl.Metrics
	for u := 1; u <= 30; u++ {
		ms = append(ms, rl.Metrics{Update: u, Loss: 2 - float64(u)/20, PolicyLoss: 1, ValueLoss: 0.5, Entropy: 1.5, Episodes: 20, Wins: int64(u % 20)})
	}
	figs = append(figs, PPOFigures("tictactoe", "mcts:sims=100,c=1.4", ms)...)
	ls := Lengths{Groups: []string{"won by az:net=runs/zero-c4/iter-0042.canopynet,sims=400", "won by mcts:sims=2000", "draw"},
		Values: [][]int{{22, 23, 23, 25, 30, 41}, {7, 9, 22, 22}, {42}}, Unfinished: 3}
	figs = append(figs, LengthFigure("connect4", ls))
	logs, err := ParseLogs([]byte(seqHand("mcts:sims=1000", "sequence-greedy")), "s.json")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := SequencePlacements(logs, ByAgent)
	if err != nil {
		t.Fatal(err)
	}
	figs = append(figs, PlacementFigure("sequence", pl))
	res := &arena.TournamentResult{Game: "connect4", Agents: []string{"mcts:sims=2000", "az:net=iter-0042,sims=400", "random"}, TotalGames: 60}
	res.Pairwise = make([][]arena.PairStats, 3)
	for a := range res.Pairwise {
		res.Pairwise[a] = make([]arena.PairStats, 3)
		for b := range res.Pairwise[a] {
			if a != b {
				res.Pairwise[a][b] = arena.PairStats{Games: 20, Wins: 10 + a - b, Draws: 2, Losses: 8 - a + b}
			}
		}
	}
	res.Elo = []arena.Rating{{Agent: "mcts:sims=2000", Value: 120, Lo: 40, Hi: 200}, {Agent: "az:net=iter-0042,sims=400", Value: 0, Lo: -80, Hi: 80}, {Agent: "random", Value: -120, Lo: -200, Hi: -40}}
	figs = append(figs, ArenaFigures(res)...)
	return figs
}

func TestChartsFit(t *testing.T) {
	figs := everyChartKind(t)
	kinds := map[string]bool{}
	for _, f := range figs {
		kinds[f.Name] = true
	}
	for _, k := range []string{"loss", "elo", "scores", "solver", "winrate", "lengths", "heatmap", "pairs", "ratings"} {
		if !kinds[k] {
			t.Fatalf("no %s chart among %v", k, names(figs))
		}
	}
	for _, f := range figs {
		own := f.Size()
		for _, s := range []Size{{}, {Width: 4.5 * vg.Inch, Height: 3.2 * vg.Inch}, {Width: 12 * vg.Inch, Height: 4.5 * vg.Inch}} {
			g := f.Resized(s)
			sz := g.Size()
			t.Run(fmt.Sprintf("%s/%.1fx%.1fin", f.Name, float64(sz.Width/vg.Inch), float64(sz.Height/vg.Inch)), func(t *testing.T) {
				if s.Width == 0 && (sz.Width != own.Width || sz.Height != own.Height) {
					t.Fatalf("Resized with a zero size changed the size")
				}
				rec := newRecorder(vgimg.New(sz.Width, sz.Height))
				dc := draw.New(rec)
				ps, err := g.layout(dc)
				if err != nil {
					t.Fatal(err)
				}
				var datas []draw.Canvas
				legendTexts := map[string]bool{}
				var legendBoxes []vg.Rectangle
				for _, p := range ps {
					p.plot.Draw(p.area)
					data := p.plot.DataCanvas(p.area)
					datas = append(datas, data)
					for i, l := range p.legends {
						l.Draw(p.legendAreas[i])
						legendBoxes = append(legendBoxes, l.Rectangle(p.legendAreas[i]))
					}
				}
				for _, p := range ps {
					for _, k := range (&p).legendKeys() {
						legendTexts[k] = true
					}
				}
				canvas := vg.Rectangle{Max: vg.Point{X: sz.Width, Y: sz.Height}}
				const tol = 0.5 // points
				if len(rec.texts) == 0 {
					t.Fatal("no text drawn")
				}
				for _, tb := range rec.texts {
					b := tb.box
					if b.Min.X < canvas.Min.X-tol || b.Min.Y < canvas.Min.Y-tol || b.Max.X > canvas.Max.X+tol || b.Max.Y > canvas.Max.Y+tol {
						t.Errorf("text %q at %v leaves the %v canvas", tb.text, b, canvas.Max)
					}
					if legendTexts[tb.text] {
						for _, d := range datas {
							if overlaps(b, d.Rectangle, tol) {
								t.Errorf("legend text %q at %v is inside the data area %v", tb.text, b, d.Rectangle)
							}
						}
					}
				}
				for _, lb := range legendBoxes {
					if lb.Min.X < -tol || lb.Min.Y < -tol || lb.Max.X > canvas.Max.X+tol || lb.Max.Y > canvas.Max.Y+tol {
						t.Errorf("legend %v leaves the canvas %v", lb, canvas.Max)
					}
					for i, p := range ps {
						d := datas[i]
						if overlaps(lb, d.Rectangle, tol) {
							t.Errorf("legend %v overlaps the data area %v", lb, d.Rectangle)
						}
						for _, gb := range p.plot.GlyphBoxes(p.plot) {
							r := gb.Rectangle.Add(vg.Point{X: d.X(gb.X), Y: d.Y(gb.Y)})
							if overlaps(lb, r, 0) {
								t.Errorf("legend %v covers a data point at %v", lb, r)
							}
						}
					}
				}
			})
		}
	}
}

// legendKeys returns the names in p's legends.
func (p *placed) legendKeys() []string {
	var out []string
	for _, k := range p.keys {
		out = append(out, k.name)
	}
	return out
}

// The recorder measures what it should: a string drawn rotated by a
// quarter turn about the origin spans the y axis by its width.
func TestRecorderRotation(t *testing.T) {
	rec := newRecorder(vgimg.New(100, 100))
	rec.SetColor(color.Black)
	f := font.DefaultCache.Lookup(plot.DefaultFont, 10)
	rec.Push()
	rec.Translate(vg.Point{X: 50, Y: 10})
	rec.Rotate(math.Pi / 2)
	rec.FillString(f, vg.Point{}, "abc")
	rec.Pop()
	b := rec.texts[0].box
	w := f.Width("abc")
	if math.Abs(float64(b.Max.Y-b.Min.Y-w)) > 1e-6 || b.Min.Y != 10 || b.Max.X > 50+f.Extents().Descent+1e-6 {
		t.Errorf("rotated text box %v; want height %v from y = 10, right edge at x = 50 + descent", b, w)
	}
}
