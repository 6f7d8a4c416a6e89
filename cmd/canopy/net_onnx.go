package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/spec"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/onnx"
)

// netOnnxHelp is the net command's help for import and export.
const netOnnxHelp = `
  canopy net import MODEL.onnx [--game G] [--out F] [--policy-output NAME] [--value-output NAME]
      convert an ONNX policy-value network (from PyTorch, or exported by
      Canopy) into a Canopy network (.safetensors, default MODEL.safetensors):
      a plain residual net maps onto Canopy's ResNet (or PPO CNN) and then runs
      on every backend and trains further. G defaults to the model's
      canopy.game metadata; the input must be G's observation [batch,C,H,W];
      outputs are found by shape unless named (docs/ONNX.md)
  canopy net export NET --onnx OUT.onnx [--game G]
      write a network (file or shipped name) as ONNX, opset 17, dynamic batch:
      input "obs", outputs "policy" (logits) and "value" (tanh, [batch,1], or
      [batch,players] for a per-player value head); a
      recurrent CNN-LSTM exports as one step with its state as inputs "h_in",
      "c_in" and outputs "h_out", "c_out"`

func netImport(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy net import", flag.ContinueOnError)
	game, out, polOut, valOut := new(string), new(string), new(string), new(string)
	spec.Table{
		gameOption(game, "", "the game the network plays (default: the model's canopy.game metadata)"),
		spec.String("out", out, "", "output file (.safetensors; default: the model's name with .safetensors)"),
		spec.String("policy-output", polOut, "", "name of the graph output holding the policy logits [batch,A] (default: found by shape)"),
		spec.String("value-output", valOut, "", "name of the graph output holding the value [batch] or [batch,1], or [batch,players] per player (default: found by shape)"),
	}.Flags(fs)
	pos, err := parseSub(e, "import", fs, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) != 1 {
		return usagef("want exactly one ONNX file, got %d arguments", len(pos))
	}
	src := pos[0]
	if *out == "" {
		*out = strings.TrimSuffix(src, filepath.Ext(src)) + ".safetensors"
	}
	if filepath.Clean(*out) == filepath.Clean(src) {
		return usagef("--out %s would overwrite the model", *out)
	}
	if err := checkOutputFile(*out); err != nil {
		return fmt.Errorf("--out: %v", err)
	}
	m, err := onnx.ReadFile(src)
	if err != nil {
		return inputUsage(err)
	}
	spec := *game
	if spec == "" {
		if spec = m.Metadata[onnx.MetaGame]; spec == "" {
			return usagef("%s names no game (no %s metadata): pass --game", src, onnx.MetaGame)
		}
	}
	g, err := games.New(spec)
	if err != nil {
		if *game != "" {
			return usagef("--game: %v", err)
		}
		return fmt.Errorf("the model's game %q: %v (pass --game)", spec, err)
	}
	net, err := onnx.Import(m, g, onnx.ImportOptions{PolicyOutput: *polOut, ValueOutput: *valOut})
	if err != nil {
		return fmt.Errorf("%s: %v", src, err)
	}
	buf, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("%v", err)
	}
	sum := sha256.Sum256(buf)
	meta := map[string]string{"canopy.onnx.source": filepath.Base(src), "canopy.onnx.sha256": hex.EncodeToString(sum[:]),
		"canopy.onnx.producer": m.Producer, "canopy.onnx.opset": fmt.Sprint(m.Opset)}
	if err := net.SaveWithMetadata(*out, meta); err != nil {
		return fmt.Errorf("%v", err)
	}
	enc, _ := nets.EncodingFor(g, net.InputSize())
	plane := ""
	if enc.LegalPlane {
		plane = " (observation + legal-move plane)"
	}
	_, err = fmt.Fprintf(e.Stdout, "wrote %s: %s for %s%s, %d parameters, from %s (%s, opset %d)\n",
		*out, describe(net.Config()), g.Spec(), plane, net.NumParams(), src, m.Producer, m.Opset)
	return stdoutError(err)
}

func netExport(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy net export", flag.ContinueOnError)
	out, game := new(string), new(string)
	spec.Table{
		spec.String("onnx", out, "", "output ONNX file (required)"),
		gameOption(game, "", "the game the network plays (default: the one it was made for)"),
	}.Flags(fs)
	pos, err := parseSub(e, "export", fs, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) != 1 {
		return usagef("want exactly one network (file or shipped name), got %d arguments", len(pos))
	}
	if *out == "" {
		return usagef("--onnx OUT.onnx is required")
	}
	if err := checkOutputFile(*out); err != nil {
		return fmt.Errorf("--onnx: %v", err)
	}
	ref := pos[0]
	if nets.IsONNXPath(ref) {
		return usagef("%s is an ONNX model already: net export writes Canopy networks as ONNX (`canopy net info %s` shows what the model holds)", ref, ref)
	}
	if buf, err := os.ReadFile(ref); err == nil && nets.IsRecurrentFile(buf) {
		return netExportRecurrent(e, ref, buf, *game, *out)
	}
	spec := *game
	if spec == "" {
		spec, err = netGame(ref)
		if err != nil {
			return inputUsage(err)
		}
	}
	g, err := games.New(spec)
	if err != nil {
		if *game != "" {
			return usagef("--game: %v", err)
		}
		return fmt.Errorf("the network's game %q: %v (pass --game)", spec, err)
	}
	net, _, err := nets.OpenNet(ref, g)
	if err != nil {
		return netUsage(err)
	}
	buf, err := onnx.Export(net, onnx.ExportOptions{Game: g, ProducerVersion: producerVersion()})
	if err != nil {
		return fmt.Errorf("%v", err)
	}
	if err := atomicfile.WriteFile(*out, buf); err != nil {
		return fmt.Errorf("%v", err)
	}
	_, err = fmt.Fprintf(e.Stdout, "wrote %s: %s for %s, ONNX opset %d, %d bytes; input %q [batch,%d,%d,%d], outputs %q [batch,%d] and %q [batch,%d]\n",
		*out, describe(net.Config()), g.Spec(), onnx.ExportOpset, len(buf), onnx.InputName, net.Config().InputPlanes,
		net.Config().Height, net.Config().Width, onnx.PolicyName, net.PolicySize(), onnx.ValueName, net.ValueSize())
	return stdoutError(err)
}

// netGame is the game a network reference was made for: a shipped
// network's, a file's config, or an ONNX model's canopy.game metadata. A
// network that names none is a usage error (pass --game).
func netGame(ref string) (string, error) {
	for _, s := range nets.Shipped() {
		if s.Name == ref {
			return s.Game, nil
		}
	}
	var game string
	if nets.IsONNXPath(ref) {
		m, err := onnx.ReadFile(ref)
		if err != nil {
			return "", err
		}
		game = m.Metadata[onnx.MetaGame]
	} else {
		buf, err := os.ReadFile(ref)
		if err != nil {
			return "", fmt.Errorf("network %q: %w (a file or a shipped name)", ref, unwrapPath(err))
		}
		n, err := nets.Decode(buf)
		if err != nil {
			return "", fmt.Errorf("%s: %v", ref, err)
		}
		game = n.Config().Game
	}
	if game == "" {
		return "", usagef("%s names no game: pass --game", ref)
	}
	return game, nil
}

// netGameOr is the game of a command that takes --game and --net (bench
// net, bench search, selfplay): game when given, else the game netRef was
// made for (netGame), else def: for init, random and a network that
// cannot be read, whose error the command reports where it opens it.
func netGameOr(game, netRef, def string) string {
	if game != "" {
		return game
	}
	switch netRef {
	case "", "init", "random", "default":
		return def
	}
	if s, err := netGame(netRef); err == nil {
		return s
	}
	return def
}

func producerVersion() string { return strings.TrimPrefix(versionString(), "canopy ") }

// netExportRecurrent exports study 000's CNN-LSTM (one step, its LSTM
// state as explicit inputs and outputs).
func netExportRecurrent(e *env, ref string, buf []byte, gameSpec, out string) error {
	r, _, err := nets.DecodeRecurrent(buf)
	if err != nil {
		return fmt.Errorf("%s: %v", ref, err)
	}
	if gameSpec == "" {
		gameSpec = r.Config().Game
	}
	opts := onnx.ExportOptions{ProducerVersion: producerVersion()}
	if gameSpec != "" {
		if opts.Game, err = games.New(gameSpec); err != nil {
			return usagef("game %q: %v", gameSpec, err)
		}
	}
	onnxBuf, err := onnx.ExportRecurrent(r, opts)
	if err != nil {
		return fmt.Errorf("%v", err)
	}
	if err := atomicfile.WriteFile(out, onnxBuf); err != nil {
		return fmt.Errorf("%v", err)
	}
	_, err = fmt.Fprintf(e.Stdout, "wrote %s: recurrent CNN-LSTM for %s (one step), ONNX opset %d, %d bytes; inputs %q [batch,%d], %q and %q [batch,%d]; outputs %q [batch,%d], %q [batch,1], %q and %q\n",
		out, gameSpec, onnx.ExportOpset, len(onnxBuf), onnx.InputName, r.InputSize(), onnx.HiddenIn, onnx.CellIn, r.Hidden(),
		onnx.PolicyName, r.PolicySize(), onnx.ValueName, onnx.HiddenOut, onnx.CellOut)
	return stdoutError(err)
}

// onnxInfo prints what an ONNX model holds: producer, opset, inputs and
// outputs with their shapes, operator counts and metadata.
func onnxInfo(e *env, path string, asJSON bool) error {
	m, err := onnx.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%v", err)
	}
	ops := map[string]int{}
	for _, n := range m.Nodes {
		ops[n.Op]++
	}
	params := 0
	for _, t := range m.Consts {
		params += t.Size()
	}
	shape := func(v onnx.ValueInfo) string {
		parts := make([]string, len(v.Dims))
		for i, d := range v.Dims {
			parts[i] = fmt.Sprint(d)
			if d < 0 {
				parts[i] = safeText(v.DimNames[i])
				if parts[i] == "" {
					parts[i] = "?"
				}
			}
		}
		return safeText(v.Name) + " [" + strings.Join(parts, ",") + "]"
	}
	var ins, outs []string
	for _, v := range m.Inputs {
		ins = append(ins, shape(v))
	}
	for _, v := range m.Outputs {
		outs = append(outs, shape(v))
	}
	if asJSON {
		return writeNetJSON(e.Stdout, map[string]any{"file": path, "format": "onnx", "producer": m.Producer, "opset": m.Opset,
			"inputs": ins, "outputs": outs, "ops": ops, "constants": params, "metadata": m.Metadata})
	}
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	for i, op := range names {
		names[i] = fmt.Sprintf("%s %d", op, ops[op])
	}
	keys := make([]string, 0, len(m.Metadata))
	for k := range m.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n  ONNX model from %s, opset %d, %d nodes, %d constant values\n  inputs  %s\n  outputs %s\n  operators %s\n",
		path, m.Producer, m.Opset, len(m.Nodes), params, strings.Join(ins, ", "), strings.Join(outs, ", "), strings.Join(names, ", "))
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s = %s\n", safeText(k), clip(safeText(m.Metadata[k])))
	}
	_, err = io.WriteString(e.Stdout, b.String())
	return stdoutError(err)
}

// safeText quotes s when it holds anything but printable characters
// (strings from a file go to the terminal).
func safeText(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(s)
	}
	return s
}
