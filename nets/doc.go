// Package nets holds Canopy's policy-value neural networks on the CPU:
// residual AlphaZero networks and the small PPO CNN, their inference and
// training (backward passes, SGD with momentum and Adam, L2, Polyak
// averaging), an LSTM cell and an LSTM layer over segments (truncated
// backpropagation through time), study 000's recurrent CNN-LSTM with its
// factored card x square policy (Recurrent), input encodings (Encoding:
// the legal-move plane, the feature encoding), weight files in the
// safetensors format, and the batch-first Backend interface with its
// registry and the always-available "cpu" backend.
//
// It is for: building a net from a Config (presets "connect4", "sequence",
// "megazero", "connect4-ppo"), evaluating batches of planar game
// observations, training on (observation, target policy, target value)
// batches, and loading/saving weights that PyTorch can read and write
// (tensor names and layouts follow a PyTorch state_dict). It is not for:
// the GEMM arithmetic itself (package kernels), GPU execution (package cuda
// registers its own Backend), batching requests from many searchers
// (package batcher), or the self-play training loop.
//
// # Layout
//
// Inputs arrive planar, [planes][height][width] per sample, exactly as
// games.State.Observation writes them; the first layer transposes them to
// NHWC, the layout of every activation inside (see package kernels). A
// network is a list of units over numbered activation buffers, each unit
// out = tanh?(relu?(bn?(W*in + b) + residual)). For inference, batch norm
// with its running statistics is folded into the preceding convolution's
// weights and bias, so every unit is one fused kernels.GemmBiasAct call
// (kernels.Conv3x3BiasAct for 3x3 convolutions, or kernels.Conv3x3Winograd
// after SetConvAlgorithm(ConvWinograd), the cpu backend's conv=winograd,
// its default with the AVX2 kernels). Under ConvWinograd float32 Forward
// runs F(3x4,3x3) tiles (kernels.Conv3x3Winograd34) instead of
// F(2x2,3x3) where the shape pays (wino34Pays: the Connect Four board)
// with the SIMD kernels, at every batch (wino34Inference: a sample's
// outputs do not depend on the batch it is in); bfloat16 inference and
// other boards stay on F(2x2). On a board of one cell (the flat
// observations of Sushi Go's views) a 3x3 convolution is its centre tap's
// GEMM, and runs as one, in inference and training, in float32 under
// either precision (unit.pointwise).
// Forward splits a batch of at least two samples and 2 MFLOP of work per
// kernel thread into slices that run the whole network
// concurrently (kernels.Parallel), each on its own samples of every scratch
// buffer; the outputs equal a single pass bit for bit, and each slice's
// kernel calls run on one thread.
// Training runs its 3x3 convolutions forward by Winograd with the SIMD
// kernels (F(3x4,3x3) tiles where they pay, as on the Connect Four board,
// in float32 and in bfloat16, else F(2x2,3x3)) and by im2col with the
// portable ones (SetTrainConvAlgorithm; under bfloat16 the portable
// kernels take F(3x4) where it pays too, computing what the AVX-512 BF16
// ones do).
// In Backward, the weight gradient of a 3x3 convolution expands the
// im2col matrix one block of samples at a time (see trainBlockRows) so it
// stays in cache, and the input gradient is a forward convolution
// (Winograd or im2col, as forward) of the output gradient with the kernel
// rotated 180 degrees and its channels swapped. Batch statistics,
// elementwise passes (batch norm's in kernels' AVX-512 loops) and weight
// gradients are computed over fixed slices of the batch on all kernel
// threads (kernels.Parallel) and summed in slice order, so results do not
// depend on the number of threads; a step allocates nothing after the
// first. SetTrainPrecision(BF16) runs the forward convolutions, the
// input gradients and the Winograd weight gradients with bfloat16
// operands and float32 sums (the weights stay float32 master weights,
// rounded anew for every pass).
//
// # Value heads
//
// The scalar value head gives one tanh value per sample, from the mover's
// view. Config.ValuePlayers P > 1 gives P (the default for games of three
// or more players, ForGame): the players' returns scaled to [-1, 1],
// seat-rotated so that output i is the return of player (mover+i) mod P,
// so one network serves every seat. It trains on the mean over samples
// and players of the squared error. Value slices then hold batch x P
// values, row-major, in Forward, ForwardTrain, Backward, Batch and every
// Backend's Evaluate; backends say their width through ValueSizer (the
// cpu, cuda, random, cache, checker and ort backends; nets/onnx exports
// and imports a [batch, P] value output). The scalar path is unchanged:
// a scalar config stores no value_players key, so its files are as before.
//
// Weight files store each tensor in PyTorch's layout ([Cout][Cin][kh][kw]
// convolutions, [out][in] dense layers with the input flattened channel
// major) and the Config as JSON in the "canopy.config" metadata entry;
// Param converts to the kernels' layout on load.
//
// # Concurrency
//
// A Net is not safe for concurrent use (inference and training share its
// scratch memory); Clone it per goroutine. Backends may be called by one
// goroutine at a time unless their documentation says otherwise; the cpu
// backend serialises calls with a mutex.
package nets
