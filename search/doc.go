// Package search is Canopy's Monte Carlo tree search: one engine in which
// every study's agent is a configuration of Options.
//
// It provides a preallocated tree arena (int32 indices, compact per-edge
// statistics), selection rules as small strategy values (UCT, UCB1-Tuned,
// PUCT, RAVE, PoolRAVE, alpha-AMAF, progressive bias), leaf evaluators
// (random and heuristic rollouts, static value+prior evaluators, blends),
// backups of per-player value vectors (so 2-player zero-sum, 3-4 player,
// multi-action and simultaneous games share one code path), root
// determinization and SO-ISMCTS for hidden information (every selection
// rule, with availability counts in place of the parent's visits), tree
// and root parallelism, tree reuse between moves and an optional
// transposition table. The agent `mcts` (agent.go) exposes all of this through spec
// strings such as "mcts:sel=ucb1tuned,c=0.7,sims=2000".
//
// # The studies' variants
//
// Besides Canopy's own forms, the methods as the studies define them are
// options (issue 21): study 003's progressive bias Q + K*sqrt(ln(N+1)/n) +
// b*h/(1+n) (pbform=study003, K = 5, b = 0.2) and alpha-AMAF with
// UCB1-Tuned exploration (amafexplore=ucb1tuned); study 001's RAVE score
// x + alpha*x_RAVE + sqrt(2 ln n / n_j), alpha = (beta - n_RAVE)/beta
// (ravesched=study001), 0/1 rewards in selection (rewards=01) and
// PoolRAVE's pool in tree selection (pool=tree: with probability poolp a
// selection step takes one of the poolk edges with the best AMAF value;
// pool=rollout, the default, plays pool moves in the rollouts as Rimmel
// et al. 2010 do); study 000's cut-off rollouts scored by the game
// (cut=heuristic, cut=score).
// Progressive bias always sees the heuristic min-max scaled to [0, 1]
// among a node's actions, per player at simultaneous nodes.
//
// # What a search maximises
//
// Each player's value is its return (Game.Returns scaled to [-1, 1]) by
// default; objective=win (Options.Objective, for the mcts and az agents
// alike) values winning alone instead, +1 for the player ahead of every
// other and -1 for everyone else, in terminal positions and in rollouts
// cut off (the lead over the strongest opponent). In games of more than
// two players the two differ: Tetris Link's return is the pairwise score,
// which a safe second place or a shared first earns part of.
//
// It is not a game-specific engine (no opening books, no solvers), and not
// a neural network: networks plug in through Evaluator, or drive
// SelectLeaf/Backup themselves from a batcher.
//
// # Pipeline
//
// The hot loop is the numbered pipeline of Tree.simulate: (1) SelectLeaf
// descends and applies virtual loss, (2) an Evaluator scores the leaf, (3)
// Backup expands the leaf (when expanding at evaluation) and adds the
// values along the path. Steps (1) and (3) are public so that a batching
// driver can keep many leaves of many trees in flight, one Walker per leaf;
// call Tree.SetShared(true) when several goroutines do so. An unshared
// tree under plain UCT (no progressive bias, rewards=01 or pbform=study003,
// no ISMCTS) descends through
// expanded decision nodes in descendPlain/selectUCTPlain, which make the
// same choices as the general loop with plain loads. Simulations
// allocate nothing once the walkers are warm (pinned by
// TestZeroAllocsPerSimulation).
//
// # Memory layout
//
// A node is 20 bytes (first edge, edge count, visits, expansion state,
// mover; a simultaneous node's first header edge's child field holds the
// head of its list of children, 16-byte joint-action links in a parallel
// array that trees of simultaneous-move games allocate, one per node). An edge is 24 bytes in two parallel arrays: 16 hot bytes read by
// every selection step (value sum, visits, prior) and 8 that the descent
// follows (action, child). Virtual losses live in a third parallel array
// of 4 bytes per edge that a tree allocates only once it has a second
// walker (a lone simulation never selects among edges it has itself
// taken; the selection loops read zeros instead). Rules that keep more per edge
// (UCB1-Tuned's squared-value sum, the RAVE family's AMAF sum and count,
// simsel=exp3/rm's bandit sums, SO-ISMCTS availability counts) get another
// parallel array of 24 bytes; UCT and PUCT trees do not allocate it.
// Edges of a node are contiguous and created all at once when the node is
// expanded; child nodes are created lazily when an edge is first taken.
// Measured on connect4 searches with one walker: 34 bytes per edge
// (expanded child) including the nodes for UCT and 27 for PUCT, against
// 68 and 59 before the records were split and the virtual losses moved
// out (BenchmarkUCT's and BenchmarkPUCT's B/child).
// A PUCT tree that expands at evaluation defers a leaf's edges to its
// next visit (Tree.deferEdges): until then the node keeps only its
// evaluator's priors, 4 bytes per legal action in a fourth array. Most
// leaves are never visited again, so most nodes of such a search carry no
// edges: 95 bytes per node on connect4 against 188 (BenchmarkPUCT's
// B/node), and 21-27% more nodes/s in the batched engine with 1024 trees.
// Arenas are sized by MaxNodes/MaxEdges; when one is full the search keeps
// simulating without new nodes (full=keep: leaves are evaluated below the
// deepest node and statistics keep accumulating) or stops (full=stop).
// Tree.Reset makes a used tree equal to a new one with its memory kept
// (self-play reuses one tree per slot across games), and subtree reuse
// (reuse.go) moves the played child's subtree to the root.
//
// # Searching in steps
//
// Tree.Continue runs more simulations on a searched tree without
// resetting it, and Tree.PV reads the principal variation (most visited
// child from the root); between two calls no simulation runs, so a
// caller may read the root's statistics without locks. Agent.AnalyzeLive
// searches in such increments and reports a Snapshot after each (the web
// UI's live analysis); the result equals one search of the same budget.
//
// # Values
//
// Evaluators return one value per player in [-1, 1] (game returns are
// rescaled from [MinReturn, MaxReturn]). Each edge stores only the value of
// the player who chooses it (the mover of its node; at simultaneous nodes
// the owner of its segment), so each player maximises its own value, the
// mover of every node is used (multi-action turns need no special case),
// and two-player zero-sum games pay for one float per edge like any other.
//
// # Chance and simultaneous nodes
//
// Chance nodes have one edge per outcome (closed loop); simulations sample
// the outcome with ChanceState.SampleChance, so outcomes are visited in
// proportion to their probability. Simultaneous nodes use decoupled
// selection: one edge segment and one bandit per player, and one child
// per joint action taken (simultaneous-move MCTS as Lanctot et al. 2013
// and Tak et al. 2014 define it; see jointChild in descend.go), so that
// every node stands for one state and its edges are legal whenever it is
// reached. (Until 2026-11 a joint node had a single open-loop child for
// every joint action; in Sushi Go, where the hand a player receives
// depends on what its neighbour took, 30% of the joint actions chosen
// below the first joint node were then not legal.) An evaluator with a policy
// gives each player's segment its own priors (Walker.Priors holds one
// block of NumActions per player in simultaneous games), so that PUCT
// selects per player on its own priors (decoupled PUCT; search/engine
// evaluates each player's block from that player's view).
//
// The per-player bandit is Options.SimSel (mcts key simsel):
//   - ucb (default): the tree's Rule, deterministic per player. Decoupled
//     UCB is known not to converge in simultaneous-move games (Lisý et al.
//     2013): the players' statistics can co-adapt, e.g. both pick the
//     dominated move of a prisoner's dilemma in about half the seeds.
//   - exp3: Exp3 sampling, sigma = (1-g)*rho + g/K with rho the softmax of
//     eta*X (X: cumulative importance-weighted rewards, eta = g/K, the
//     maximum subtracted for stability); g = simgamma (0.1).
//   - rm: regret matching (SM-MCTS-RM): rho proportional to the positive
//     cumulative regrets (uniform when none), mixed with g/K likewise.
//
// Rewards of both are the player's value halved, v/2 in [-1/2, 1/2] (the
// [0, 1] reward centred, so that losses carry information; simsel.go).
// Under exp3/rm each player's move at a simultaneous root comes from its
// average strategy (the mean of rho over the root's visits, ActionStat.
// Strategy): its most probable action (simfinal=max, default) or sampled
// from it (simfinal=sample: the equilibrium-consistent choice, needed for
// mixed equilibria such as matching pennies, but at a game move's budget
// the average still spreads over weaker moves, and sampled Sushi Go picks
// lost every game to standard MCTS; RESULTS §3b). The bandit
// sums live in edgeExt.w2 and the cumulative strategy in edgeExt.amafW,
// fields otherwise used by UCB1-Tuned and the RAVE family, whose statistics
// are therefore not kept at joint nodes under exp3/rm; the edge stays 48
// bytes with its extension (simsel.go). Exp3/RM simulations allocate nothing and are race-free with
// threads > 1 (atomic loads and adds; strategies are computed from
// snapshots that may miss the simulations in flight).
//
// # Concurrency
//
// Statistics are int32/int64 counters (values in fixed point, 2^-24 units)
// updated with atomic adds when the tree is shared, plain adds otherwise.
// Node expansion is claimed by a CAS on the node's state (unexpanded ->
// expanding); the winner writes the edges and publishes them with an atomic
// store (expanded), which orders them before any reader's atomic load that
// sees expanded. Children are published by CAS on the edge's child index.
// Virtual loss: each in-flight visit counts as a visit with value -1 for
// the chooser until Backup removes it. Go's sync/atomic operations are
// sequentially consistent, which is stronger than this protocol needs.
// Single-threaded searches are deterministic for a seed.
package search
