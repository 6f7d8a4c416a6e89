// Package multi holds turn-level search strategies for games whose turns
// consist of several atomic actions (games.MultiActionState: Connect4d,
// Strands), after study 004 (MegaZero, ../shared/studies/004_*.txt,
// section III and Algorithms 1-4). Each strategy is a Planner that
// returns a whole turn (the study's TURN-SELECTION); Agent plays it one
// atomic action per Act.
//
//   - MCTS-V, per action: the `mcts` agent of package search, which
//     searches before every atomic action with its whole budget (edges are
//     atomic actions; the mover of every node is used, so turns need no
//     special case). It is the baseline of the comparisons, but it spends
//     d searches per turn.
//   - MCTS-V, per turn (Algorithm 2, agent `mcts-v`): one search with the
//     turn's budget, then the turn read off the tree (BB with Vanilla).
//   - MCTS-BB, bridge-burning (Algorithm 3, agent `mcts-bb`): the turn's
//     budget split over its atomic actions, one committed per phase, the
//     root moved down with the chosen subtree kept (BB).
//   - EMCTS-V and EMCTS-BB (section III-D/E, Algorithm 4, agent `emcts`,
//     `emcts:bb=true`): a tree of whole-turn sequences whose edges are
//     mutations (EMCTS).
//   - FH-EMCTS, flexible horizon (section III-D, Algorithm 4 with H > d,
//     `emcts:horizon=3` for the study's H = 3d): sequences that span the
//     opponent's replies, whose mutations score the opponent's value.
//
// With the study's Q = 0 for unvisited mutations and small c, an EMCTS
// tree is nearly one chain as deep as the budget, and a good sequence is
// found far below the root; so `phases=0` (the default) reads the turn at
// the end of the most visited path, not after a fixed number of steps
// (the study's fixed count; `phases=N` keeps it). On the Connect4d test
// position this takes EMCTS-V and EMCTS-BB from 0/20 to 20/20 seeds
// finding the whole-turn win at 2,000 simulations; FH-EMCTS plays it in
// 7/20, settling on later wins (see EMCTS).
//
// Budgets are per turn, in simulations (at most one evaluator call each;
// EMCTS counts the policy calls that build its root sequence too) and/or
// time, and every planner stops searching when its context is cancelled,
// completing the turn from what it has. All planners are deterministic for
// a seed with a simulation budget.
//
// The `mcts-v` and `mcts-bb` agents take the `mcts` options (selection
// rule, evaluator, ...) with sims and time per turn (default 250, the
// study's Connect4d self-play budget); they run one single-threaded tree
// through the search pipeline (search.Tree.SelectLeaf and Backup), with
// tree reuse always on. The `emcts` agent takes the evaluator options of
// `mcts` (eval, rollout, ...) and its own (c, horizon, phases, bb, itemp).
//
// Not here: the policy histories of Eq. 1-2 (training targets; only the
// turn is returned), online evolutionary planning (OEP), batched network
// evaluation through search/engine (network evaluators work through
// search.Evaluator, one leaf at a time), and parallel search.
package multi
