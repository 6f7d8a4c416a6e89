// Package selfplay runs AlphaZero self-play on the batched search engine
// (package search/engine) and writes the training data as sharded NumPy
// .npz files.
//
// Run plays many games at once: each game is a slot with K jobs (K
// determinizations in hidden-information games, 1 otherwise) on one of
// the engine's workers. A move is searched with PUCT (network priors,
// Dirichlet noise at every root, the shared engine.Settings), the root
// statistics of the K trees are merged, the position is recorded as
// (observation from the mover's view, visit distribution, legal actions,
// final outcome from the mover's view), and the move is sampled from the
// visits for the first TempPlies plies, then the most visited. At a
// simultaneous state (Sushi Go's `sushigo` view) every player's choice is
// searched in turn, seat 0 first, on deals sampled from that player's
// view (decoupled PUCT at the joint nodes, see search/engine), recorded
// as that player's position, and the choices are applied together: a
// joint move gives one position per player. Optional
// resignation keeps a fraction of games playing on to count false
// positives.
//
// Trees are kept between moves and games: a move's search starts from the
// subtree of the position reached (its statistics kept, root noise drawn
// afresh; reuse=false, the manifest's noreuse, turns this off, and it
// never applies under Gumbel search or on sampled deals), and a slot's
// trees are Reset, not
// reallocated, when it starts its next game, so that a long run allocates
// only its game records.
//
// Options beyond plain AlphaZero (all off by default): playout-cap
// randomisation (pcr: a share of moves get the full budget and are
// recorded, the rest a fast search and are not; KataGo), policy target
// pruning (prune; KataGo), Gumbel root search (gumbel: the improved
// policy is recorded), random openings (randomplies: each game starts
// after 0..N uniformly random plies that are neither searched nor
// recorded, so that self-play also sees positions its own play avoids),
// and every position's root Q is stored (root_q) for value targets that
// mix outcome and search value (train's qmix).
//
// Game i uses seeds derived from (seed, i) only, so any game can be
// replayed alone; Output writes shards (numpy.load reads them) listed in
// manifest.json, and --resume regenerates exactly the unfinished games.
//
// Turn search (study 004, MegaZero's Algorithm 1): with
// Config.TurnSearch, an agent spec of mcts-v, mcts-bb or emcts (see
// TurnSearchSpec for the study's defaults it adds), Run plays every game
// with PlayTurns instead: one search/multi.TurnSearcher per game, seeded
// from (seed, game id) alone, searches each whole turn, its leaves
// evaluated by the engine's network through engine.NewEngineEvaluator
// (one blocking request per leaf; Trees games run at once, one goroutine
// each, and their requests share the engine's batches). Each atomic
// action is recorded with the searcher's policy history row as its
// policy target (Eq. 1 / Eq. 2), RootQ 0, and Nodes the turns'
// simulations; the shards and manifest are the same, and the manifest
// records the search (Manifest.TurnSearch), which --resume must match.
// The PUCT Settings have no meaning then and must stay at their
// defaults; single-action games, oep (no per-action statistics) and
// time budgets (not replayable) are refused.
//
// It is not a trainer (see train), not a tournament runner (see arena)
// and not the search driver (see search/engine).
package selfplay
