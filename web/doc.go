// Package web is Canopy's browser UI: one HTTP server (Server) whose page
// and scripts are embedded in the binary, behind `canopy serve`.
//
// # What it offers
//
//   - Play: any registered game (a spec string, as on the command line)
//     between any agents, or people ("human" seats). Games live on the
//     server; the page asks for the state, submits moves and asks the
//     agent to move. Connect Four, tic-tac-toe, Hex, Connect4d (its boards
//     side by side), Strands (its numbered hexagon) and Sequence (the card
//     board, own hand) are drawn as SVG boards that take clicks; Tetris Link
//     as its well with a piece picker that drops a piece where the mouse
//     points; Sushi Go as hands and tableaux of card chips. Each game
//     describes its board (games.Boarder, in the game's package); this
//     package imports no game and draws the games.Board by its Kind, a
//     kind the page does not know as a plain grid of stones and labels.
//     Moves that are not a cell stay buttons, and a game with no drawing
//     of its own falls back to its text drawing and a list of its legal
//     moves as buttons, so every game is playable. Drawings use only what
//     the viewing player may see (Draw(view), Board(view)); with hidden
//     information the page lists only the viewer's legal moves and hides
//     chance outcomes (dealt cards) in the history.
//   - Analysis: per-action visits, Q and prior of an agent.Analyzer (mcts,
//     az, policy, solver) for the position, overlaid on the board (a table
//     for the generic view). mcts and az stream it live (stream.go): a
//     snapshot about every 200 ms while they search, with the principal
//     variation (the most visited child from the root, a dozen plies) as
//     a move list, until the budget is spent. The search runs in
//     increments on one tree (search.Tree.Continue, the engine's jobs
//     re-queued with a new budget) and its root is read between two
//     increments, when no simulation is in flight: no locks, no data race,
//     one pause per snapshot. Other analyzers send one final snapshot.
//   - Replay: a JSON game log (arena.Log) uploaded from the page or named
//     from the --logs directory, step by step, with a value graph over
//     the moves computed on demand by a chosen analyzer (the solver for
//     Connect Four shows a blunder as a cliff), one position per request
//     (values.go); a click on the graph jumps to that move, and the
//     analysis of the shown position is overlaid on the board. A finished
//     game's winning line is marked (games.WinningLiner).
//   - Runs: the metrics.jsonl of each run directory named on the command
//     line (zero's layout) as a table, and its plots/*.svg. The page
//     watches each run live (watch.go) while zero or selfplay writes it:
//     metrics.jsonl records as they appear, the self-play manifest's
//     totals (selfplay's manifest.json, or zero's newest
//     selfplay/iter-NNNN/manifest.json) and finished game logs in logs/,
//     read from disk every Config.WatchEvery; the writers know nothing of
//     the watch.
//
// # API
//
//	GET    /api/catalog              games and agents, for the page's forms
//	POST   /api/games                {"game", "players", "seed"} -> state (201)
//	GET    /api/games/{id}           state (?view=P: draw for player P, -1 all;
//	                                 with hidden cards, see below)
//	DELETE /api/games/{id}           ends the game, closing its agents (204)
//	POST   /api/games/{id}/move      {"action", "player"}: a person's move
//	POST   /api/games/{id}/agent     the agent(s) to move play
//	POST   /api/games/{id}/analyze   {"agent", "player"} -> per-action rows
//	GET    /api/games/{id}/analyze/live?agent=A&player=P&every=200ms
//	                                 the same, live: an event stream
//	POST   /api/games/{id}/undo      takes back the last human move
//	GET    /api/games/{id}/log       the game so far as an arena.Log (409
//	                                 while a person plays with hidden cards)
//	GET    /api/logs                 the *.json in --logs: game logs and
//	                                 (kind "arena") arena results
//	GET    /api/logs/{name}          one of them, replayed into frames
//	POST   /api/replay               an uploaded log, replayed into frames
//	POST   /api/replay/analyze       {"name" or "log", "agent", "position"}:
//	                                 one position of a log analysed, with
//	                                 its value (the replay's value graph)
//	GET    /api/runs                 the run directories
//	GET    /api/runs/{run}/metrics   metrics.jsonl as a flattened table
//	GET    /api/runs/{run}/watch     the run's changes as an event stream
//	GET    /runs/{run}/plots/{file}  one plots/*.svg file
//	GET    /api/dashboard            the charts the dashboards can draw
//	GET    /api/dashboard/runs/{run}/{chart}.svg    a run's chart, drawn now
//	GET    /api/dashboard/logs/{chart}.svg?game=G&by=agent|seat
//	                                 lengths or heatmap of the --logs games
//	GET    /api/dashboard/arena/{file}/{chart}.svg  an arena --json result
//	                                 (every chart: ?width=PX draws it for
//	                                 the page's width)
//
// Errors are JSON {"error": "one line"}: 400 for bad input (the messages of
// games.New, agent.New and ParseAction, as on the command line), 404 for
// unknown games, logs and runs, 403 for a view or analysis of hidden
// cards, 409 for a move out of turn or while an agent is thinking, 413 for
// bodies over the limit, 421 for a foreign Host, 429 when the server holds
// Config.MaxGames games (or the client Config.MaxClientGames) or
// Config.MaxStreams event streams, 504 when
// an agent overruns its timeout, 422 when a file a chart is drawn from does
// not parse (file:line: what).
//
// The event streams (text/event-stream) send JSON events: "snapshot" and
// "error" for a live analysis, which ends after its final snapshot;
// "metrics", "selfplay" and "game" for a run watch, which lasts until the
// client goes away. Errors before the first event are JSON answers as
// above.
//
// # Hidden information
//
// While a person plays a game with hidden cards (Sequence, Sushi Go), the
// server shows only what that person's seat may see: the state is drawn
// for the seat at the screen (the only person, or with several people at
// one screen the one to choose, and the page shows a hand-over screen
// before another seat's cards); any other view= is refused with 403.
// Deals and unrevealed picks are hidden in the history and as the last
// move, the log is refused (409) until the game is over, there is no
// undo, analyses are for that seat's move only and run on a
// determinization drawn from what it has seen (games.Resampler), and the
// deals come from a secret seed, not from the seed the client chose and
// every seat is shown. Games between agents only, and games that are
// over, show everything. TestHiddenCardsDoNotLeak re-deals the hidden
// cards at every position and requires identical answers from every
// endpoint for every view.
//
// # Safety
//
// Every input is validated with the CLI's rules; request bodies are size
// limited; a request whose Host header is not one of the server's names
// (localhost, 127.0.0.1, [::1], Config.Hosts) is refused with 421, so a
// page on a DNS-rebinding domain cannot reach it; POST bodies must be
// application/json and a request whose Origin names another host is
// refused (no cross-site requests). One client (remote IP address) holds
// at most Config.MaxClientGames games (429 beyond). Search
// budgets in agent specs are capped (Config.MaxSims, MaxNodes, MaxThreads,
// MaxTime) and every agent call runs under a context deadline
// (Config.MoveTimeout). Agent options that name files (net=, eval=,
// static=) may only name files inside the run directories. Files are read
// only from the directories named on the command line, through os.Root
// (no "..", no symlink escapes). Event streams also refuse requests whose
// Sec-Fetch-Site names another site (an <img> or <script> elsewhere sends
// no Origin), hold one of Config.MaxStreams slots each, and a live
// analysis takes an agent slot and runs under the same caps and deadline
// as any analysis. A panic in a handler is recovered,
// logged and answered with 500; tests and fuzzing check that none occurs.
//
// # Concurrency
//
// Server is safe for concurrent use. Each game has its own mutex, which
// guards its state and is never held while an agent thinks: an agent call
// marks the game busy, works on a clone of the state and applies its move
// under the mutex afterwards; other moves meanwhile are refused with 409.
// Agents are not safe for concurrent use, and the busy mark guarantees one
// call at a time per game. Agents that hold resources (io.Closer) are
// closed exactly once, when the game is deleted, expires (Config.IdleTimeout)
// or the server closes — after the call in flight, if any, returns.
// Config.MaxThinking bounds the agent calls running at once server-wide.
// A stream's events are written by its handler's goroutine only: a live
// search hands its latest snapshot over through a one-slot mailbox (a newer
// snapshot replaces one not yet sent, so a slow client never slows the
// search), and the search stops when the client goes away (the request's
// context). EndStreams (called by Close, and by `canopy serve` at shutdown)
// ends every stream.
//
// What this package is not for: serving on the open internet (there are no
// accounts; bind to loopback), and drawing charts (package plots draws the
// dashboards' SVGs). `canopy arena` writes no files while it plays (only
// its table at the end), so an arena is watched only through game logs
// that something writes into a run's logs/.
package web
