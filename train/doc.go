// Package train is the AlphaZero training loop over self-play data: it
// loads the .npz shards that `canopy selfplay` writes into a replay window,
// draws shuffled and symmetry-augmented minibatches, trains a nets.Net on
// the AlphaZero loss (policy cross-entropy + value MSE + L2) with SGD with
// momentum or Adam under a learning-rate schedule, keeps a Polyak-averaged
// copy, and writes checkpoints whose safetensors metadata records their
// lineage.
//
// # Pipeline
//
//  1. LoadDataset reads one or more self-play iterations (run directories
//     with a manifest.json, or bare shards), validates every shard against
//     the game (observation shape, action count, finite values, policies
//     that are distributions, optional legal masks) and keeps the replay
//     window: the last Iterations iterations and the last Window
//     positions, in game order. Only shards inside the window are read.
//  2. A Sampler draws batches from the Dataset: epoch-wise shuffles, each
//     sample transformed by a random symmetry of the game (the identity
//     included) when the game implements games.Symmetric.
//  3. Run steps a nets.Trainer, reports Metrics, stops with a
//     DivergedError on a non-finite loss, and saves checkpoints with
//     SaveCheckpoint.
//
// # Checkpoints
//
// Iteration k is written as iter-000k.safetensors in the output
// directory and, with Polyak averaging, iter-000k.avg.safetensors. Both
// are ordinary nets files (nets.Load reads them; PyTorch can too, see
// testdata/interop.py) whose metadata adds the CheckpointInfo entries
// (MetaGame, MetaIteration, MetaPositions, MetaSteps, MetaParent, ...).
// Writes are atomic and a network with a NaN or infinite weight is never
// written, so the checkpoint on disk is always the last good one.
//
// # Data format
//
// A shard is an .npz archive with arrays obs float32 [N, obs_shape...],
// policy float32 [N, A], value float32 [N] and optionally legal uint8
// [N, A] (1 = legal), root_q float32 [N] (for qmix) and values float32
// [N, players] (every player's return, seat-rotated so that the mover
// comes first; what a per-player value head trains on) and root_values
// float32 [N, players] (the search's root value of every player, rotated
// the same way, its first entry root_q: qmix mixes each player's entry of
// a per-player head's target with it; without it, the mover's entry
// alone); game_id and ply order a run's rows. The .npy
// reader here is independent of package selfplay's writer and accepts only
// C-order little-endian float32, int32, int64 and uint8/bool arrays.
//
// # Concurrency and determinism
//
// A Dataset is immutable and safe for concurrent use; Samplers and Run are
// not (one goroutine each; the nets kernels parallelise each step inside).
// Batches are a function of the dataset, the batch size, the seed and the
// augmentation flag; the trained weights also depend only on these and the
// Options, whatever the number of threads (package nets sums in a fixed
// order).
//
// What this package is not for: generating self-play data (package
// selfplay), evaluating networks against each other (package arena), or
// running on a GPU (training runs on the CPU kernels of package nets).
package train
