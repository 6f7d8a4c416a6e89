package onnx

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// OpenBackend opens the ONNX model at path as a backend for game g, so
// that agents can name an .onnx file as their network (az:net=FILE.onnx):
// a graph Import maps onto Canopy's ResNet runs as that network on the
// backend spec asks for (any backend, native speed); any other graph the
// CPU graph runner compiles runs as "onnx-cpu", and then spec may only
// name the CPU ("", "auto", "cpu"). It returns the backend, the network's
// source and one line saying what was chosen.
func OpenBackend(path string, g games.Game, spec string, maxBatch int) (nets.Backend, nets.Source, string, error) {
	src := nets.Source{Ref: path, Desc: path + " (ONNX)"}
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, src, "", fmt.Errorf("network %q: %w", path, err)
	}
	sum := sha256.Sum256(buf)
	src.SHA256 = hex.EncodeToString(sum[:])
	m, err := ReadFile(path)
	if err != nil {
		return nil, src, "", err
	}
	net, err := Import(m, g, ImportOptions{})
	if err == nil {
		be, c, err := nets.OpenBackendSpec(spec, net, nets.BackendOptions{MaxBatch: maxBatch})
		if err != nil {
			return nil, src, "", err
		}
		src.Desc = path + " (ONNX, mapped onto Canopy's " + string(net.Config().Head) + " network)"
		return be, src, c.String(), nil
	}
	if !errors.Is(err, ErrUnsupported) {
		return nil, src, "", fmt.Errorf("%s: %v", path, err)
	}
	why := err
	if name, _, _ := strings.Cut(spec, ":"); name != "" && name != "auto" && name != "cpu" {
		return nil, src, "", fmt.Errorf("%s is not Canopy's ResNet (%v): it runs only on the CPU graph runner, not on backend %s", path, why, name)
	}
	gr, err := CompileGraph(m, g, ImportOptions{}, maxBatch)
	if err != nil {
		return nil, src, "", fmt.Errorf("%s: %v", path, err)
	}
	src.Desc = path + " (ONNX, run as a graph on the CPU)"
	reason, _, _ := strings.Cut(strings.TrimPrefix(why.Error(), ErrUnsupported.Error()+": "), ":")
	return gr, src, "using onnx-cpu, the graph as it is (not Canopy's ResNet at " + reason + ")", nil
}
