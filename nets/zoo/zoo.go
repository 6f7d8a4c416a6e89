// Package zoo ships trained networks inside the binary. Importing it (the
// canopy command does) registers each network by name with
// nets.RegisterShipped and makes it its game's default: agents that say
// net=default (the az and policy agents' default) then play with it, and
// net=NAME names it explicitly.
//
// Shipped networks:
//
//   - connect4-zero: Connect Four, 32 channels x 4 residual blocks, the
//     Polyak-averaged network after 28 + 34 iterations (11,600 self-play
//     games) of the `canopy zero` runs recorded in docs/RESULTS.md
//     (section "AlphaZero on Connect Four from zero"): with 800
//     simulations it plays an optimal move in 89.5% of the 400
//     solver-labelled positions (the network alone: 49.5%).
//
// The files are ordinary checkpoints (safetensors with the nets config and
// the training lineage in the metadata): `canopy net info` reads them.
package zoo

import (
	_ "embed"

	"github.com/canopy-go/canopy/nets"
)

//go:embed connect4.safetensors
var connect4 []byte

func init() {
	nets.RegisterShipped("connect4-zero", "connect4", "AlphaZero-trained 32x4 net, see docs/RESULTS.md", connect4)
	nets.SetDefault("connect4-zero")
}
