package plots

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/canopy-go/canopy/arena"
)

// ParseArena parses the JSON result of `canopy arena --json` (file names
// it in errors) and checks that its tables fit its agents.
func ParseArena(data []byte, file string) (*arena.TournamentResult, error) {
	var res arena.TournamentResult
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		return nil, inputErrorf(file, 0, "not the JSON of canopy arena --json: %v", err)
	}
	k := len(res.Agents)
	switch {
	case k < 2:
		return nil, inputErrorf(file, 0, "%d agents listed: a tournament has 2 or more (is this the output of canopy arena --json?)", k)
	case len(res.Pairwise) != k:
		return nil, inputErrorf(file, 0, "pairwise table has %d rows for %d agents", len(res.Pairwise), k)
	case len(res.Elo) != 0 && len(res.Elo) != k:
		return nil, inputErrorf(file, 0, "%d Elo ratings for %d agents", len(res.Elo), k)
	}
	for a, row := range res.Pairwise {
		if len(row) != k {
			return nil, inputErrorf(file, 0, "pairwise row %d has %d entries for %d agents", a+1, len(row), k)
		}
		for b, ps := range row {
			if ps.Wins < 0 || ps.Draws < 0 || ps.Losses < 0 || ps.Wins+ps.Draws+ps.Losses != ps.Games {
				return nil, inputErrorf(file, 0, "%s vs %s: %d wins, %d draws and %d losses do not add up to %d games",
					res.Agents[a], res.Agents[b], ps.Wins, ps.Draws, ps.Losses, ps.Games)
			}
			if s := ps.Score; s != nil && !(s.Lo >= 0 && s.Lo <= s.Value && s.Value <= s.Hi && s.Hi <= 1) {
				return nil, inputErrorf(file, 0, "%s vs %s: score %v outside its interval [%v, %v] or [0, 1]", res.Agents[a], res.Agents[b], s.Value, s.Lo, s.Hi)
			}
		}
	}
	for _, r := range res.Elo {
		if !(finite(r.Lo) && finite(r.Hi) && r.Lo <= r.Value && r.Value <= r.Hi) {
			return nil, inputErrorf(file, 0, "Elo of %s: %v outside its interval [%v, %v]", r.Agent, r.Value, r.Lo, r.Hi)
		}
	}
	return &res, nil
}

// Pairing is one row of the pairs chart: A's record against B.
type Pairing struct {
	A, B            string
	Win, Draw, Loss float64 // shares of the games, summing to 1
	Score, Lo, Hi   float64 // wins + draws/2 per game, 95% Wilson interval
	Games           int
}

// Pairings lists every pair of agents a < b that met, in table order.
func Pairings(res *arena.TournamentResult) []Pairing {
	var out []Pairing
	for a := range res.Agents {
		for b := a + 1; b < len(res.Agents); b++ {
			ps := res.Pairwise[a][b]
			if ps.Games == 0 {
				continue
			}
			n := float64(ps.Games)
			sc := arena.Wilson(float64(ps.Wins)+float64(ps.Draws)/2, ps.Games)
			if ps.Score != nil {
				sc = *ps.Score // the tournament's own (the same formula)
			}
			out = append(out, Pairing{A: res.Agents[a], B: res.Agents[b], Games: ps.Games,
				Win: float64(ps.Wins) / n, Draw: float64(ps.Draws) / n, Loss: float64(ps.Losses) / n,
				Score: sc.Value, Lo: sc.Lo, Hi: sc.Hi})
		}
	}
	return out
}

// Colours of wins, draws and losses in the pairs chart.
var (
	winColor  = color.RGBA{0x2c, 0xa0, 0x2c, 0xff}
	drawColor = color.RGBA{0xb0, 0xb0, 0xb0, 0xff}
	lossColor = color.RGBA{0xd6, 0x27, 0x28, 0xff}
)

// ArenaFigures draws a tournament: "pairs", one horizontal bar per
// pairing split into the first agent's wins, draws and losses, with its
// score (wins + draws/2) and 95% Wilson interval as a point with error
// bars; and "ratings", each agent's Elo with its 95% interval, when the
// result has ratings.
func ArenaFigures(res *arena.TournamentResult) []*Figure {
	pairs := Pairings(res)
	title := fmt.Sprintf("%s: %d games", res.Game, res.TotalGames)
	if res.Partial {
		title += " (partial)"
	}
	figs := []*Figure{{Name: "pairs", width: 8 * vg.Inch, height: vg.Length(1.8+0.45*float64(max(1, len(pairs)))) * vg.Inch,
		build: func() ([]panel, error) { return pairsPanel(title, pairs) }}}
	if len(res.Elo) > 0 {
		elo := append([]arena.Rating(nil), res.Elo...)
		figs = append(figs, &Figure{Name: "ratings", width: vg.Length(2+0.9*float64(len(elo))) * vg.Inch, height: 4 * vg.Inch,
			build: func() ([]panel, error) { return ratingsPanel(title, elo) }})
	}
	return figs
}

func pairsPanel(title string, pairs []Pairing) ([]panel, error) {
	p := panel{Plot: plot.New()}
	p.Title.Text = title + ": results per pairing\nthe first agent's wins, draws and losses; its score with 95% Wilson interval"
	p.X.Label.Text = "share of games"
	p.X.Min, p.X.Max = 0, 1
	p.Add(plotter.NewGrid())
	n := len(pairs)
	if n == 0 {
		p.Title.Text = title + ": no games"
		return []panel{p}, nil
	}
	// Rows from the top: pairing i at Y = n-1-i.
	parts := []struct {
		name string
		col  color.Color
		v    func(Pairing) float64
	}{{"win", winColor, func(q Pairing) float64 { return q.Win }}, {"draw", drawColor, func(q Pairing) float64 { return q.Draw }},
		{"loss", lossColor, func(q Pairing) float64 { return q.Loss }}}
	var below *plotter.BarChart
	for _, part := range parts {
		vs := make(plotter.Values, n)
		for i, q := range pairs {
			vs[n-1-i] = part.v(q)
		}
		bc, err := plotter.NewBarChart(vs, vg.Points(18))
		if err != nil {
			return nil, err
		}
		bc.Horizontal = true
		bc.Color = part.col
		bc.LineStyle.Width = 0
		if below != nil {
			bc.StackOn(below)
		}
		below = bc
		p.Add(bc)
		p.addKey(part.name, bc)
	}
	pts := make(errPoints, n)
	labels := make([]string, n)
	for i, q := range pairs {
		pts[n-1-i] = errPoint{q.Score, float64(n - 1 - i), q.Score - q.Lo, q.Hi - q.Score}
		labels[n-1-i] = fmt.Sprintf("%s vs %s (%d)", q.A, q.B, q.Games)
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Color = color.Black
	eb, err := plotter.NewXErrorBars(pts)
	if err != nil {
		return nil, err
	}
	p.Add(sc, eb)
	p.addKey("score", sc)
	p.NominalY(labels...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	return []panel{p}, nil
}

func ratingsPanel(title string, elo []arena.Rating) ([]panel, error) {
	p := panel{Plot: plot.New()}
	p.Title.Text = title + ": Elo ratings\nmean 0, with 95% intervals"
	p.Y.Label.Text = "Elo"
	p.Add(plotter.NewGrid())
	pts := make(errPoints, len(elo))
	names := make([]string, len(elo))
	for i, r := range elo {
		pts[i] = errPoint{float64(i), r.Value, r.Value - r.Lo, r.Hi - r.Value}
		names[i] = r.Agent
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Color = colorOf(0)
	eb, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return nil, err
	}
	eb.Color = colorOf(0)
	p.Add(sc, eb)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(elo))-0.5 // points clear of the frame
	pad(&p.Y, 0.05, 0.05)
	return []panel{p}, nil
}
