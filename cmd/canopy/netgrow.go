package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/spec"
	"github.com/canopy-go/canopy/train"
)

// netGrow is `canopy net grow`: nets.Grow on a weights file, keeping its
// training history (iteration, positions, steps) in the output's metadata
// with the source as parent, so that `canopy train --net OUT` and `canopy
// zero --net OUT` continue the count.
func netGrow(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy net grow", flag.ContinueOnError)
	file, out := new(string), new(string)
	seed, channels, blocks := new(uint64), new(int), new(int)
	spec.Table{
		spec.File("net", file, "", "network to grow: a .safetensors file or a shipped name (AlphaZero heads)"),
		spec.String("out", out, "", "output file (.safetensors)"),
		spec.Int("channels", channels, 0, 0, 1024, "residual tower width, at least the network's (0 = the network's)"),
		spec.Int("blocks", blocks, 0, 0, 64, "residual blocks, at least the network's (0 = the network's); new blocks go after the old ones"),
		seedOption(seed, "for which channel each new one copies, the split of their readers' weights, and the new blocks' weights"),
	}.Flags(fs)
	pos, err := parseSub(e, "grow", fs, args)
	if err != nil {
		return helpOK(err)
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *file == "" || *out == "" {
		return usagef("--net and --out are required")
	}
	if *channels == 0 && *blocks == 0 {
		return usagef("give --channels, --blocks or both (the size to grow to)")
	}
	if err := checkOutputFile(*out); err != nil {
		return fmt.Errorf("--out: %v", err)
	}
	src, meta, err := loadGrowable(*file)
	if err != nil {
		return netUsage(fmt.Errorf("--net: %w", err))
	}
	old := src.Config()
	grown, err := nets.Grow(src, *channels, *blocks, *seed)
	if err != nil {
		return usagef("--net %s: %v", *file, err)
	}
	info, ok, err := train.ParseCheckpointInfo(meta)
	if err != nil {
		return fmt.Errorf("--net %s: %v", *file, err)
	}
	var extra map[string]string
	if ok {
		info.Parent = filepath.Base(*file)
		info.Preset = grown.Config().Preset
		info.Averaged = false
		info.Options = ""
		extra = info.Metadata()
	}
	if err := grown.SaveWithMetadata(*out, extra); err != nil {
		return fmt.Errorf("%v", err)
	}
	c := grown.Config()
	fmt.Fprintf(e.Stdout, "wrote %s: %s, grown from %d x %d (%s), %d parameters, %.1f MFLOP per evaluation (was %.1f)\n",
		*out, describe(c), old.Channels, old.Blocks, *file, grown.NumParams(), float64(grown.FLOPs())/1e6, float64(src.FLOPs())/1e6)
	return nil
}

// loadGrowable opens ref, a shipped network's name (which has no training
// history) or a weights file, with its metadata.
func loadGrowable(ref string) (*nets.Net, map[string]string, error) {
	for _, s := range nets.Shipped() {
		if s.Name != ref {
			continue
		}
		g, err := games.New(s.Game)
		if err != nil {
			return nil, nil, fmt.Errorf("shipped network %s: its game %q: %v", ref, s.Game, err)
		}
		net, _, err := nets.OpenNet(ref, g)
		return net, nil, err
	}
	net, meta, err := nets.LoadWithMetadata(ref)
	if errors.Is(err, fs.ErrNotExist) {
		// As net export says it (netGame).
		return nil, nil, fmt.Errorf("network %q: %w (a file or a shipped name)", ref, unwrapPath(err))
	}
	return net, meta, err
}
