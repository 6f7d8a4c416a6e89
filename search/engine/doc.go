// Package engine is the batched search engine: many Monte Carlo tree
// searches whose leaves flow through one batcher into one network
// backend, and the agents built on it.
//
// # The driver (worker.go)
//
// An Engine owns a batcher.Batcher in front of a nets.Backend. Work is
// spread over Workers, each used by one goroutine with one
// batcher.Client; a worker runs Jobs (one job = one search.Tree searching
// one root with its own simulation budget) in this loop:
//
//  1. for every job that is ready: select up to Leaves leaves with
//     Tree.SelectLeaf (virtual loss spreads them), back terminal leaves up
//     at once, encode the others (the leaf mover's Observation, followed
//     by the legal-move plane for nets built with it: nets.EncodingFor)
//     straight into reserved batcher slots and Commit them;
//  2. wait for completions (Client.Wait), turn each result into the
//     per-player value vector and masked-softmax priors in the leaf's
//     Walker, Release the slot;
//  3. when all leaves of a job's step are back, back them up in selection
//     order (Tree.Backup) and mark the job ready again; when its budget is
//     spent, call the job's owner.
//
// A job first evaluates its root and hands the policy to
// Tree.PrepareWith: root priors come straight from the network. A job's
// leaves go out in lock-step (all selected, then all backed up), so a
// search's result depends only on its seeds and the network's per-row
// outputs, never on batch boundaries or thread timing. A job with one
// leaf in flight builds exactly the tree that a single-threaded
// Tree.Search builds with an equivalent evaluator (the walkers are the
// tree's own).
//
// Value convention: the search wants one value per player (each tree
// edge keeps the value of the player who chose it, so every player
// selects on its own: MaxN). A scalar network value is from the leaf
// mover's view, so value[mover] = v and every other player gets
// -v/(players-1) (2 players: -v; the zero-sum reading; "paranoid"). A
// per-player value head (nets.Config.ValuePlayers) gives the row
// seat-rotated, row[i] the value of player (mover+i) mod players, and
// the job writes each player its own (backup=maxn, the default), or
// spreads row[0] as a scalar head's (backup=paranoid, for ablations).
// Chance leaves are advanced by sampling to the next decision and valued
// there without priors.
//
// Simultaneous moves (Sushi Go's `sushigo` view): a leaf where every
// player chooses at once sends one row per player, each from that
// player's view with its own legal actions (LegalFor), and player q's
// policy becomes the priors of q's edge segment at the joint node
// (decoupled PUCT: every player selects on its own segment by PUCT, as
// decoupled UCT does with UCB; Lanctot et al. 2013, Tak et al. 2014).
// There is no mover, so the values come from every player's own view
// (simValues): with a per-player head under MaxN the mean over the
// players' rows of each row's entry for that player; with a scalar head
// (or paranoid) the mean over the players' views of each view's spread
// vector, which keeps two players zero-sum. Hidden hands are handled as
// elsewhere, by the determinizations of the searching player's view. A
// job may blend a rollout into each leaf value (study 000: 0.5 network +
// 0.5 eight-turn rollout); the rollout runs while the network evaluates,
// except in a lone search, which runs its batches itself after it.
// With Job.SetNetVisits(n) (the netvisits option) the network sees a leaf only
// on its n-th visit: the simulations that end at it before are valued by
// the rollout alone, backed up at once in step (1) and leave it
// unexpanded (AlphaGo's expansion threshold), so where the network's
// forward pass is most of a simulation's cost the same CPU buys several
// times the simulations (docs/RESULTS.md, section 10).
//
// # Uses
//
//   - RunWorkers: a few goroutines with many jobs each (self-play, see
//     package selfplay; bench).
//   - Analyze: several workers on one shared tree and budget.
//   - Searcher: one position searched on the caller's goroutine, with K
//     determinizations as K jobs for hidden information. Many Searchers on
//     many goroutines share one engine; a Paced engine waits (a few ms at
//     most, and only while some search is not yet blocked waiting for
//     its results) for the rows of every running search before it runs a
//     batch, so that one goroutine per game still gives full batches. A
//     lone search (a few rows in flight) runs its batches itself on its
//     goroutine while the batcher's consumer is idle.
//   - Pool: engines keyed by network, backend and game, reference
//     counted, so that every network agent on the same network shares one.
//     There is no process-wide pool: a command makes one (NewPool, with
//     its --backend as PoolOptions.Backend) and passes it in the
//     agent.Env of every agent it builds (PoolOf finds it; an Env without
//     one gives each agent a private pool). The pool is also the
//     search.EvaluatorOpener that `mcts:eval=NET` opens its network with.
//
// # Gumbel root search
//
// With Settings.Gumbel (gumbel.go) a job's root runs Gumbel AlphaZero's
// sequential halving (Danihelka et al., ICLR 2022, as in mctx): m actions
// sampled by Gumbel-top-k on the network's logits, the budget halved over
// them phase by phase by g + logits + sigma(q), PUCT below the root; the
// improved policy softmax(logits + sigma(completed Q)) is the training
// target.
//
// # Agents
//
// The package registers `az` (PUCT with network priors and values;
// options in Settings.Table, the same table self-play uses), `policy`
// (the network's most probable legal move, or sampled with a
// temperature); Pool.OpenEvaluator lets `mcts:eval=NET` search with a
// network when the agent's Env carries the pool.
// Agents implement io.Closer to release their engine; arena closes them.
package engine
