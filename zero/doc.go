// Package zero runs the AlphaZero loop: self-play with the current
// network, training on a replay window of recent self-play, evaluation,
// metrics and plots, iteration after iteration, in one run directory.
//
// # Run directory
//
//	zero.json                      the run's configuration (Config)
//	checkpoints/iter-NNNN.safetensors  the network after iteration N
//	                               (iter-0000: the start), with
//	                               iter-NNNN.avg.safetensors, its Polyak
//	                               average, which self-play and evaluation use
//	selfplay/iter-NNNN/            iteration N's self-play (manifest + shards)
//	selfplay/iter-NNNN/origins.jsonl  who played each game (--nats): one
//	                               JSON line appended per game written, the
//	                               last for an id counting (not atomic: a
//	                               record, which nothing reads back)
//	train/iter-NNNN.json           iteration N's training result
//	iterations/iter-NNNN.json      iteration N's record, written last
//	metrics.jsonl                  one record per finished iteration
//	plots/{loss,elo,solver}.{svg,png}  charts (package plots); elo and
//	                               solver only once there is data for them
//	evaluation/iter-NNNN.json      iteration N's evaluation games played by
//	                               fleet workers (--async --nats), each
//	                               written before its message is acknowledged
//	fleet.json                     the run's id on a NATS fleet (--nats)
//	nats/                          the embedded NATS server's JetStream
//	                               store (--nats embedded)
//
// # Resuming
//
// Every file is written atomically and every step is skipped when its
// output exists: a checkpoint appears only when its training is complete,
// an iteration's record only when its evaluation is. Self-play resumes game
// by game (selfplay.OpenOutput with resume). After a crash or kill -9,
// running the same command again continues with nothing lost but the work
// in flight, and the outcome is the same as an uninterrupted run's except
// for timing figures.
//
// # Asynchronous runs
//
// With Config.Async (`canopy zero --nats ... --async`) the same steps
// run as a pipeline (async.go): iteration i's games are played by fleet
// workers as soon as network i-2 exists, with the newest network (a
// newer one is published to the workers the moment it is trained; each
// game records its network in origins.jsonl), while iteration i-1
// trains, on ReplayRatio samples per new position, and the iterations
// trained before it are evaluated, in a goroutine of their own, the matches played by the
// workers (fleeteval.go) game for game as in this process; an
// iteration's record is written when its evaluation is complete.
// The workers rarely wait for training or evaluation, but which network
// plays which game depends on timing, so an asynchronous run is not
// reproducible game for game; the synchronous loop stays the default.
// Resuming works as above; the manifest of iteration i's self-play names
// network max(0, i-2), whatever played its games.
//
// # Turn search
//
// With Config.TurnSearch (`canopy zero --turn-search SPEC`), each
// iteration's self-play searches whole turns of a multi-action game
// (Connect4d, Strands) with mcts-v, mcts-bb or emcts on the current
// network, as study 004's MegaZero does (selfplay.Config.TurnSearch); the
// PUCT self-play settings then keep their defaults, training is unchanged
// (one position per atomic action, the search's policy history as its
// target; qmix mixes in the value of mcts-v's and mcts-bb's node for each
// action, selfplay.TurnSearchValues), and so is evaluation. A fleet does not play it yet.
//
// # Evaluation
//
// Each iteration's network (as az agents with EvalSims simulations that
// otherwise search as self-play does: its PUCT constants, and in
// hidden-information games its determinizations and rollout blend) plays
// the previous network and fixed baselines; the Elo of every network over
// all evaluation games of the run is recomputed each iteration (study
// 000's rolling Elo). Networks of a game with a Reference (Options: the
// command passes Connect Four's solver-labelled positions,
// games/connect4/solver.Labels) are also scored on it: the share of moves
// that keep the position's value, for the network alone and with search.
// Gating (AlphaGo Zero's 55%) is off by default.
//
// Run is not safe for concurrent use on one directory.
package zero
