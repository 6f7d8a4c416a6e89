// Package plots draws Canopy's charts from Canopy's own outputs, as SVG
// and PNG, with gonum.org/v1/plot.
//
// # Inputs and charts
//
//   - A run directory: zero's (zero.json, metrics.jsonl) gives the training
//     loss terms per iteration, the rolling Elo per iteration with its 95%
//     interval as error bars, and for Connect Four the share of optimal
//     moves on the solver-labelled set (network alone, with search, and
//     random moves); a PPO run's (ppo.json, metrics.jsonl of `canopy ppo`)
//     gives its loss terms per update and the win rate against its
//     opponent with 95% Wilson intervals. See ReadRun and Run.Figures.
//   - JSON game logs (arena.Log: `canopy play --log`, the web UI), one or
//     more per file: the game-length histogram of any game, per winner
//     (LengthFigure), and study 000's chip-placement heatmap of Sequence on
//     its 10x10 board, one panel per agent or seat (PlacementFigure).
//   - The JSON result of `canopy arena --json`: win/draw/loss shares per
//     pairing with the score's 95% Wilson interval, and the Elo ratings
//     with their intervals (ArenaFigures).
//
// Every reader checks its input and fails with an *InputError naming the
// file and, for line-oriented or multi-value files, the line; missing
// files give errors for which errors.Is(err, fs.ErrNotExist) holds. Data
// are computed first (Iteration, Lengths, Placements, Pairing) and drawn
// second (Figure), so that both can be checked on their own.
//
// A Figure renders to SVG or PNG (Figure.Render) at its own size or any
// other (Figure.Resized: width, height, PNG dpi); its layout adapts to the
// size rather than scaling: titles (a short title, an explanation on a
// second line) wrap to the width, legends stand outside the data area
// (right of it, or in columns below it on narrow canvases), and a name
// too long for the legend loses its middle. TestChartsFit checks every
// chart kind at several sizes. WriteFiles writes figures atomically
// (internal/atomicfile). The package is used by zero
// (its per-iteration plots), `canopy plot` and the web dashboards.
//
// What it is not for: interactive charts, or charts of arbitrary JSON.
//
// Functions are safe for concurrent use; a Figure is immutable once made
// and may be rendered from several goroutines at once.
package plots
