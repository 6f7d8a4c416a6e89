// Package selfplay drives many Monte Carlo tree searches at once against a
// batched policy-value network, and runs the AlphaZero self-play loop on
// top of that driver, writing training data as sharded NumPy .npz files.
//
// # The driver (driver.go)
//
// An Engine owns a batcher.Batcher in front of a nets.Backend. A run
// spreads its search jobs (one job = one search.Tree searching one root)
// over a few worker goroutines (default GOMAXPROCS). Each worker owns its
// jobs and one batcher.Client and runs this loop:
//
//  1. for every job that is ready: select up to Leaves leaves with
//     Tree.SelectLeaf (virtual loss spreads them), back terminal leaves up
//     at once, encode the others (the leaf mover's Observation) straight
//     into reserved batcher slots and Commit them;
//  2. wait for completions (Client.Wait), turn each result into the
//     per-player value vector and masked-softmax priors in the leaf's
//     Walker, Release the slot;
//  3. when all leaves of a job's step are back, back them up in selection
//     order (Tree.Backup) and mark the job ready again; when its budget is
//     spent, call the job's owner (self-play picks a move).
//
// A job's leaves go out in lock-step (all selected, then all backed up),
// so a search's result depends only on its seeds and the network's
// per-row outputs, never on batch boundaries or thread timing: game i of a
// self-play run is reproducible from (seed, i) alone. Many trees keep the
// batches full. Analysis mode (Analyze) points several workers' jobs at
// one shared tree and one shared simulation budget instead.
//
// Value convention: the network's value is from the leaf mover's view;
// the search wants one value per player, so value[mover] = v and every
// other player gets -v/(players-1) (2 players: -v; the zero-sum reading).
// Chance leaves are advanced by sampling to the next decision and valued
// there without priors; simultaneous leaves are valued from player 0's
// view without priors.
//
// # Self-play (selfplay.go, output.go, npz.go)
//
// PUCT with network priors, Dirichlet noise at every root, a temperature
// schedule, optional resignation (with a fraction of games playing on to
// count false positives), K determinizations per move for hidden
// information (K trees in the same batch stream). Every move is recorded
// as (observation, visit distribution, final outcome from the mover's
// view). Output shards are .npz archives readable by numpy.load, listed in
// manifest.json; --resume regenerates exactly the unfinished games.
//
// It is not a trainer (see nets), not a tournament runner (see arena) and
// not a single-position search agent (see search's `mcts`).
package selfplay
