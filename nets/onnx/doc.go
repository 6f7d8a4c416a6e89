// Package onnx converts Canopy's networks to and from ONNX files.
//
// Export writes a Canopy network (the AlphaZero ResNet with any head
// sizes, the PPO CNN) as an ONNX graph at opset 17 with a dynamic batch
// dimension: input "obs" [batch, C, H, W] (float32, the game's planar
// observation from the mover's side, followed by the legal-move plane
// when the net was trained with one), outputs "policy" [batch, A] (raw
// logits over the game's actions; softmax over the legal ones) and
// "value" [batch, 1] (tanh, in [-1, 1], for the player to move), or
// [batch, P] for a per-player value head (nets.Config.ValuePlayers: entry
// k for player (mover + k) mod P; the metadata says so). Batch
// norm is kept as BatchNormalization nodes with the running statistics,
// so an export -> import round trip restores every weight bit for bit.
// The model's metadata_props name the game, the encoding and the value
// convention (see MetaGame and the other keys). ExportRecurrent writes
// study 000's CNN-LSTM as one step with its LSTM state as explicit inputs
// and outputs ("h_in", "c_in" -> "h_out", "c_out").
//
// Import reads an ONNX file (opsets 11-21, float32 weights, external data
// inside the model's folder) and maps its graph onto Canopy's own ResNet
// when it is one: Conv (3x3 with padding 1 or 1x1, stride 1, group 1,
// with or without bias), BatchNormalization (kept as Canopy keeps it, or
// made from a convolution's bias when the exporter folded it), Relu, Add
// (residual connections and biases), Gemm/MatMul, Flatten/Reshape/
// Squeeze/Identity (and the Shape, Gather, Unsqueeze, Concat, Slice and
// Cast of x.view(x.size(0), -1)), Tanh on the value and Softmax/LogSoftmax on the policy
// (dropped: Canopy wants logits, and a softmax over the legal actions of
// either gives the same priors). The result is an ordinary nets.Net,
// saved in Canopy's .safetensors format: it runs on every backend at
// Canopy's native speed, and every command that takes a network (net
// info, az:net=, policy:net=, selfplay --net, zero --net) and training
// accept it. That mapping was chosen over a graph interpreter because a
// network people write as a plain residual policy-value net then loses
// nothing, not even speed or trainability; a graph that is not Canopy's
// ResNet (other activations, squeeze-excitation, global pooling, other
// kernel sizes or strides) is refused with one error naming the first
// node that does not fit, its operator and its position. Such graphs run
// as they are on CompileGraph's Graph, a small interpreter over the CPU
// kernels (a nets.Backend, "onnx-cpu": slower, CPU only, not trainable);
// OpenBackend picks the mapping or the interpreter for an .onnx file, so
// that network agents take one directly (az:net=MODEL.onnx). Mapping
// squeeze-excitation and global pooling onto Canopy's own network would
// need new blocks in package nets (inference, training, the CUDA
// backend); that is future work.
//
// It is not for: running ONNX graphs fast or on accelerators (the ONNX
// Runtime backend, package nets/ortbackend, does that), or importing
// recurrent networks.
//
// Concurrency: Decode, Import and the exporters share no state; they may
// run concurrently on different inputs (a nets.Net being exported must
// not be trained at the same time).
//
// Reading is hardened against hostile files: the protobuf runtime parses
// the bytes (no hand-written wire parser, package onnxpb), tensor sizes
// are checked before anything is allocated, external data may not leave
// the model's folder, NaN and infinite weights, cycles and dangling
// inputs are refused, each with one error.
package onnx
