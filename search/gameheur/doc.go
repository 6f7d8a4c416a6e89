// Package gameheur registers game heuristics with the search package
// (search.RegisterHeuristic) for progressive bias (mcts:bias=B) and
// heuristic-guided rollouts (mcts:rollout=heuristic): Tetris Link's tuned
// feature weights and Sushi Go's point-gain heuristic. Import it for its
// side effect. It is glue only: the heuristics live in the game packages.
package gameheur
