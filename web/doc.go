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
//     points; Sushi Go as hands and tableaux of card chips (boards.go).
//     Moves that are not a cell stay buttons, and a game with no drawing
//     of its own falls back to its text drawing and a list of its legal
//     moves as buttons, so every game is playable. Drawings use only what
//     the viewing player may see (Draw(view), sushigo's Knows); with hidden
//     information the page lists only the viewer's legal moves and hides
//     chance outcomes (dealt cards) in the history.
//   - Analysis: per-action visits, Q and prior of an agent.Analyzer (mcts,
//     az, policy, solver) for the position, overlaid on the board (a table
//     for the generic view).
//   - Replay: a JSON game log (arena.Log) uploaded from the page or named
//     from the --logs directory, step by step.
//   - Runs: the metrics.jsonl of each run directory named on the command
//     line (zero's layout) as a table, and its plots/*.svg.
//
// # API
//
//	GET    /api/catalog              games and agents, for the page's forms
//	POST   /api/games                {"game", "players", "seed"} -> state (201)
//	GET    /api/games/{id}           state (?view=P: draw for player P, -1 all)
//	DELETE /api/games/{id}           ends the game, closing its agents (204)
//	POST   /api/games/{id}/move      {"action", "player"}: a person's move
//	POST   /api/games/{id}/agent     the agent(s) to move play
//	POST   /api/games/{id}/analyze   {"agent", "player"} -> per-action rows
//	POST   /api/games/{id}/undo      takes back the last human move
//	GET    /api/games/{id}/log       the game so far as an arena.Log
//	GET    /api/logs                 the logs in --logs
//	GET    /api/logs/{name}          one of them, replayed into frames
//	POST   /api/replay               an uploaded log, replayed into frames
//	GET    /api/runs                 the run directories
//	GET    /api/runs/{run}/metrics   metrics.jsonl as a flattened table
//	GET    /runs/{run}/plots/{file}  one plots/*.svg file
//
// Errors are JSON {"error": "one line"}: 400 for bad input (the messages of
// games.New, agent.New and ParseAction, as on the command line), 404 for
// unknown games, logs and runs, 409 for a move out of turn or while an
// agent is thinking, 413 for bodies over the limit, 429 when the server
// holds Config.MaxGames games, 504 when an agent overruns its timeout.
//
// # Safety
//
// Every input is validated with the CLI's rules; request bodies are size
// limited; POST bodies must be application/json and a request whose
// Origin names another host is refused (no cross-site requests). Search
// budgets in agent specs are capped (Config.MaxSims, MaxNodes, MaxThreads,
// MaxTime) and every agent call runs under a context deadline
// (Config.MoveTimeout). Agent options that name files (net=, eval=,
// static=) may only name files inside the run directories. Files are read
// only from the directories named on the command line, through os.Root
// (no "..", no symlink escapes). A panic in a handler is recovered,
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
//
// What this package is not for: serving on the open internet (there are no
// accounts; bind to loopback), live views of running arenas or self-play,
// and plots of its own (it shows the SVGs that runs already write).
package web
