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
//   - OEP, online evolutionary planning (Justesen et al. 2016/2017, the
//     tree-less baseline the study cites; agent `oep`): a population of
//     whole turns evolved by uniform crossover and mutation with repair.
//
// With the study's Q = 0 for unvisited mutations and small c, an EMCTS
// tree is nearly one chain as deep as the budget, and a good sequence is
// found far below the root; so `phases=0` (the default) reads the turn at
// the end of the most visited path, not after a fixed number of steps
// (the study's fixed count; `phases=N` keeps it). On the Connect4d test
// position (an immediate whole-turn win, multi_test.go) every variant
// plays the win in 20 of seeds 1-20 at 2,000 simulations, except
// FH-EMCTS, in 5: its chain settles on a later win of x after an o reply
// that does not block (see EMCTS for the evidence; a limitation of the
// search as the study specifies it, not a defect found in this code).
//
// Budgets are per turn, in simulations (one evaluation each: one
// evaluator call, or the returns of a finished game; EMCTS counts the
// policy calls that build its root sequence, and MCTS-V/BB the root
// evaluations of PUCT, so sims=N is exactly N evaluator calls) and/or
// time, and every planner stops searching when its context is cancelled,
// completing the turn from what it has. All planners are deterministic
// for a seed with a simulation budget.
//
// Evaluators: the `mcts` evaluator options (eval, rollout, ...); with
// eval=NET (a weights file, a shipped network, init) leaves are evaluated
// by a network through the pooled, batched engine of search/engine (the
// search.EvaluatorOpener that the agent.Env carries): one blocking
// request per leaf, batched with every other search on the same network,
// priors from the network's policy. Agents release that engine on Close.
//
// Analysis: the agents implement agent.Analyzer (`canopy move
// --analyze`): one row per atomic action of the chosen turn, in playing
// order, with the planner's statistics (Explainer: visits, Q and prior of
// the action where it was chosen; EMCTS the visits of its mutations, the
// study's Eq. 2; OEP the best genome's evaluations and fitness).
//
// The `mcts-v` and `mcts-bb` agents take the `mcts` options (selection
// rule, evaluator, ...) with sims and time per turn (default 250, the
// study's Connect4d self-play budget); they run one single-threaded tree
// through the search pipeline (search.Tree.SelectLeaf and Backup), with
// tree reuse always on. The `emcts` agent takes the evaluator options of
// `mcts` (eval, rollout, ...) and its own (c, horizon, phases, bb,
// itemp); `oep` the evaluator options and pop, survival, mutation,
// reeval.
//
// Thread safety: planners and agents are not safe for concurrent use;
// distinct ones may run on distinct goroutines (a network evaluator is
// shared safely).
//
// Training targets: BB (mcts-v, mcts-bb) and EMCTS are TurnSearchers:
// after PlanTurn, PolicyHistory returns the study's improved policy
// history, one policy target per atomic action of the turn (Eq. 1: the
// visit distribution of the node the action was chosen from; Eq. 2: the
// visits of the mutations per position of the sequence), for self-play
// to record as the targets of the turn's positions (Algorithm 1). OEP
// has no such statistics.
//
// selfplay.PlayTurns plays and records one self-play game with a
// TurnSearcher (one position per atomic action, its PolicyHistory row as
// the target). NewTurnSearcher makes the TurnSearcher an agent spec
// names (mcts-v, mcts-bb, emcts) on an evaluator its caller supplies:
// selfplay.Run does so under its TurnSearch option (`canopy selfplay
// --turn-search`, `canopy zero --turn-search`), one searcher per game on
// the run's network (search/engine.NewEngineEvaluator), so that the
// AlphaZero loop trains from whole-turn search as study 004's MegaZero
// does.
//
// Not here: parallel search within one turn.
package multi
