// Package fleet spreads AlphaZero self-play over any number of worker
// processes through NATS JetStream (github.com/nats-io/nats.go, and an
// embedded github.com/nats-io/nats-server/v2 for single-machine runs).
//
// # Roles and subjects
//
// One trainer (package zero's loop, through Trainer) and any number of
// workers (Worker, behind `canopy worker`) share a fleet name N, which
// prefixes everything they use on the server:
//
//	KV bucket N-state, key "job"    the Job being played: run id, iteration,
//	                                game, settings, self-play semantics, seed,
//	                                network name + SHA-256
//	KV bucket N-state, key "lease"  the trainer holding the name (lease.go)
//	object store N-nets             the networks, one object per checkpoint
//	                                file ("iter-0003.avg.safetensors")
//	stream N-tasks (work queue)     one message per game id to play,
//	subject N.tasks.ITER            consumed by the shared durable consumer "workers"
//	stream N-games (work queue)     one message per finished game (EncodeGame,
//	subject N.games.ITER            or a gameRef to N-large, or a worker's
//	                                taskFailure), consumed by the durable
//	                                consumer "trainer"
//	object store N-large            games larger than the server's max_payload
//	stream N-tasks,                 one message per evaluation game to play
//	subject N.tasks.eval.ITER       (an asynchronous run's; the match in it)
//	stream N-results (work queue)   one message per evaluation game played,
//	subject N.results.ITER          consumed by the durable consumer "evaluator"
//
// Evaluation (eval.go): Trainer.Evaluate queues the games of an
// iteration's evaluation matches (arena tournaments); workers take them
// from the same consumer as self-play tasks, play them with
// arena.PlayGames (game k seeded from (match seed, k), as in one
// process), and publish each result; the trainer validates, records and
// only then acknowledges each, exactly as it does games.
//
// A worker takes up to Trees tasks at a time, plays them with
// selfplay.Run on its own batched engine (game i seeded from (seed, i)
// exactly as in-process self-play), publishes each finished game with a
// Nats-Msg-Id of run.iteration.game followed by its task's suffix
// (task.Again) and waits for the server's acknowledgement (retrying
// until it comes), and only then acknowledges the task. While it plays, it marks its tasks in progress; a worker that
// dies or stalls stops doing so and its tasks go back to the queue after
// the consumer's AckWait, for other workers to take. Nothing waits for a
// particular worker.
//
// The trainer publishes the network (once: SelfPlay and Evaluate may
// publish the same one at once, and a second Put would purge the chunks
// a worker is reading; a worker gives up a download that sends nothing
// for 30 s and tries again) and the Job, purges the iteration's tasks left on
// the server and queues one task per game the run directory still
// lacks, under message ids of a new generation (task.Again, suffixing
// the game's message id too). Not the ids of an earlier queueing: a
// server killed with SIGKILL may come back holding tasks that its
// consumer's stored state has moved past, never delivered again, and
// the duplicate window would drop new tasks of the same ids (the
// trainer then waited for ever). Evaluation tasks are queued the same
// way. While no game comes for 3 AckWaits and the server has no task
// left to deliver nor in flight, the trainer queues the missing games
// again (tasks stranded or lost under a live trainer: a server
// restarted by itself); Evaluate does the same for missing results. It consumes finished games into a
// selfplay.Output (the same shards and manifest in-process self-play
// writes). It acknowledges a game message only once the shard holding the
// game, or an earlier shard holding the same game id, is on disk with its
// manifest; a game id the run already has, or one from another run,
// iteration or network, is acknowledged and dropped. A game that does not
// fit the job's game (array sizes, returns per player, a position
// selfplay.CheckPositions refuses: NaN, values outside [-1, 1], a policy
// that is not a distribution on legal actions) is dropped with one log
// line, counted (Stats.Invalid) and terminated, never redelivered, and
// its task is queued again (with a Nats-Msg-Id suffix, task.Again, that
// the duplicate window holding the bad copy's id lets through): one bad
// client cannot stop the trainer, reach a shard training would refuse,
// or leave the trainer waiting for a game whose only copy was bad. So a
// game is written
// exactly once whatever dies when: a lost acknowledgement means a
// redelivery, which the id check drops.
//
// # Invariants
//
//   - What a worker sends is exactly the selfplay.GameRecord in-process
//     self-play would have produced for the same (network, settings, seed,
//     game id): DecodeGame(EncodeGame(r)) equals r field for field.
//   - A game message is acknowledged to the server only after its game is
//     durable in the run directory (atomic shard + manifest writes).
//   - A task is acknowledged only after its game's publish was
//     acknowledged by the server.
//
// # Concurrency
//
// A Trainer is used by one goroutine at a time, except that one Evaluate
// may run beside SelfPlay. A Worker runs in the
// goroutine that calls Run, with helper goroutines of its own; several
// Workers may run in one process. EncodeGame and DecodeGame are safe for
// concurrent use.
//
// It is not a scheduler of its own (JetStream's consumers distribute the
// work), not a training service (the trainer is package zero's loop) and
// not tied to one machine: workers reach the server by URL.
package fleet
