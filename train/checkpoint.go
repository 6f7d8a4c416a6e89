package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/nets"
)

// Metadata keys of a training checkpoint, stored in the safetensors header
// beside the network config (nets.ConfigKey).
const (
	MetaGame      = "canopy.train.game"      // spec of the game trained on
	MetaPreset    = "canopy.train.preset"    // architecture preset, when known
	MetaIteration = "canopy.train.iteration" // self-play iteration number
	MetaPositions = "canopy.train.positions" // training samples seen, cumulative over the parents
	MetaSteps     = "canopy.train.steps"     // optimizer steps, cumulative over the parents
	MetaParent    = "canopy.train.parent"    // file name of the checkpoint trained from ("" = fresh net)
	MetaAveraged  = "canopy.train.averaged"  // "true" for the Polyak-averaged copy
	MetaOptions   = "canopy.train.options"   // the Options of the run that wrote it, as JSON
)

// CheckpointInfo is the training metadata of a checkpoint.
type CheckpointInfo struct {
	Game      string `json:"game"`
	Preset    string `json:"preset,omitempty"`
	Iteration int    `json:"iteration"`
	// Positions and Steps count every training sample and optimizer step
	// that went into these weights, the parents' included.
	Positions int64  `json:"positions"`
	Steps     int64  `json:"steps"`
	Parent    string `json:"parent,omitempty"`
	Averaged  bool   `json:"averaged"`
	// Options is the JSON of the Options of the run that wrote the file
	// (informational).
	Options string `json:"-"`
}

// Metadata returns the info as safetensors metadata entries.
func (c CheckpointInfo) Metadata() map[string]string {
	m := map[string]string{
		MetaGame:      c.Game,
		MetaIteration: strconv.Itoa(c.Iteration),
		MetaPositions: strconv.FormatInt(c.Positions, 10),
		MetaSteps:     strconv.FormatInt(c.Steps, 10),
		MetaParent:    c.Parent,
		MetaAveraged:  strconv.FormatBool(c.Averaged),
	}
	if c.Preset != "" {
		m[MetaPreset] = c.Preset
	}
	if c.Options != "" {
		m[MetaOptions] = c.Options
	}
	return m
}

// ParseCheckpointInfo reads the training metadata from a file's metadata.
// A file without any (a net from `canopy net init`) gives the zero info
// and ok false; malformed entries are an error naming the key.
func ParseCheckpointInfo(meta map[string]string) (info CheckpointInfo, ok bool, err error) {
	if _, ok := meta[MetaIteration]; !ok {
		return CheckpointInfo{}, false, nil
	}
	info = CheckpointInfo{Game: meta[MetaGame], Preset: meta[MetaPreset], Parent: meta[MetaParent], Options: meta[MetaOptions]}
	num := func(key string, bits int) (int64, error) {
		v, err := strconv.ParseInt(meta[key], 10, bits)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("checkpoint metadata %s = %q is not a count", key, meta[key])
		}
		return v, nil
	}
	it, err := num(MetaIteration, 32)
	if err != nil {
		return info, true, err
	}
	info.Iteration = int(it)
	if info.Positions, err = num(MetaPositions, 64); err != nil {
		return info, true, err
	}
	if info.Steps, err = num(MetaSteps, 64); err != nil {
		return info, true, err
	}
	if s, ok := meta[MetaAveraged]; ok {
		if info.Averaged, err = strconv.ParseBool(s); err != nil {
			return info, true, fmt.Errorf("checkpoint metadata %s = %q is not a boolean", MetaAveraged, s)
		}
	}
	return info, true, nil
}

// ErrCheckpointExists is wrapped by CheckOutput's error for a checkpoint
// that exists already (and overwriting was not allowed).
var ErrCheckpointExists = errors.New("checkpoint already exists")

// CheckpointPaths returns the file names of iteration iter in dir: the
// trained network and its Polyak-averaged copy.
func CheckpointPaths(dir string, iter int) (net, avg string) {
	base := filepath.Join(dir, fmt.Sprintf("iter-%04d", iter))
	return base + ".safetensors", base + ".avg.safetensors"
}

// CheckOutput checks before any work that the checkpoints of iteration
// iter can be written in dir: dir (or, when it does not exist yet, its
// nearest existing ancestor, where it will be created) must be a writable
// directory, and the checkpoint paths must not be directories nor, unless
// overwrite, existing files. It creates nothing.
func CheckOutput(dir string, iter int, overwrite bool) error {
	if dir == "" {
		return errors.New("no output directory for the checkpoints")
	}
	probe := dir
	for {
		fi, err := os.Stat(probe)
		if err == nil {
			if !fi.IsDir() {
				if probe == dir {
					return fmt.Errorf("cannot write checkpoints in %s: it is a file, not a directory", dir)
				}
				return fmt.Errorf("cannot create the checkpoint directory %s: %s is a file, not a directory", dir, probe)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("cannot write checkpoints in %s: %v", dir, unwrapPath(err))
		}
		parent := filepath.Dir(probe)
		if parent == probe {
			break
		}
		probe = parent
	}
	p, a := CheckpointPaths(dir, iter)
	for _, path := range []string{p, a} {
		fi, err := os.Stat(path)
		switch {
		case err == nil && fi.IsDir():
			return fmt.Errorf("cannot write %s: it is a directory", path)
		case err == nil && !overwrite:
			return fmt.Errorf("%s: %w; choose another iteration or output directory, or allow overwriting", path, ErrCheckpointExists)
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return fmt.Errorf("cannot write %s: %v", path, unwrapPath(err))
		}
	}
	// A directory we cannot write into fails now, not after training.
	f, err := os.CreateTemp(probe, ".canopy-train-check-*")
	if err != nil {
		return fmt.Errorf("cannot write checkpoints in %s: %v", dir, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// SaveCheckpoint writes the checkpoint of info.Iteration into dir: net
// with info, and, when avg is not nil, avg with info.Averaged set. Each
// file is written atomically (a crash leaves the previous file or the new
// one, never a mix). A network holding a NaN or infinite weight is refused
// and nothing is written, so a diverged run never replaces a good
// checkpoint. It returns the paths written (avgPath "" without avg).
func SaveCheckpoint(dir string, net, avg *nets.Net, info CheckpointInfo) (netPath, avgPath string, err error) {
	p, a := CheckpointPaths(dir, info.Iteration)
	if err := saveCheckpointAs(p, a, net, avg, info); err != nil {
		return "", "", err
	}
	if avg == nil {
		return p, "", nil
	}
	return p, a, nil
}

// saveCheckpointAs is SaveCheckpoint into the files p and a (the
// average's) of one directory.
func saveCheckpointAs(p, a string, net, avg *nets.Net, info CheckpointInfo) error {
	if err := checkFinite(net); err != nil {
		return fmt.Errorf("not saving %s: %v", p, err)
	}
	if avg != nil {
		if err := checkFinite(avg); err != nil {
			return fmt.Errorf("not saving %s: the averaged network: %v", a, err)
		}
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create the checkpoint directory %s: %v", dir, unwrapPath(err))
	}
	info.Averaged = false
	if err := net.SaveWithMetadata(p, info.Metadata()); err != nil {
		return fmt.Errorf("writing %s: %v", p, unwrapPath(err))
	}
	if avg == nil {
		return nil
	}
	info.Averaged = true
	if err := avg.SaveWithMetadata(a, info.Metadata()); err != nil {
		return fmt.Errorf("writing %s: %v", a, unwrapPath(err))
	}
	return nil
}

// StepCheckpointPaths returns the file names of the intermediate save
// after step steps of iteration iter's training in dir
// (Options.CheckpointEvery): iter-NNNN.step-SSSSSSSSS.safetensors and its
// Polyak average. They never collide with CheckpointPaths' names, so an
// interrupted run leaves the final name free for the rerun.
func StepCheckpointPaths(dir string, iter, step int) (net, avg string) {
	base := filepath.Join(dir, fmt.Sprintf("iter-%04d.step-%09d", iter, step))
	return base + ".safetensors", base + ".avg.safetensors"
}

// stepCheckpoints lists the intermediate saves of iteration iter in dir
// (the networks, not their averages) by step.
func stepCheckpoints(dir string, iter int) (map[int]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	prefix := fmt.Sprintf("iter-%04d.step-", iter)
	out := map[int]string{}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		digits, ok := strings.CutSuffix(rest, ".safetensors")
		if !ok || len(digits) != 9 || strings.Trim(digits, "0123456789") != "" {
			continue
		}
		step, _ := strconv.Atoi(digits)
		out[step] = filepath.Join(dir, e.Name())
	}
	return out, nil
}

// removeStepCheckpoints removes the intermediate saves of iteration iter
// in dir from before step (and their averages): a later save supersedes
// them.
func removeStepCheckpoints(dir string, iter, step int) error {
	saves, err := stepCheckpoints(dir, iter)
	if err != nil {
		return err
	}
	var errs []error
	for s := range saves {
		if s < step {
			p, a := StepCheckpointPaths(dir, iter, s)
			for _, f := range []string{p, a} {
				if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// optionFlags names Options' settings by the flags of `canopy train`
// (their JSON keys with '-' for '_'; --iter sets the iteration).
var optionFlags = rundir.Flags{Renamed: map[string]string{"iteration": "iter", "metrics_every": ""}}

// LatestStepCheckpoint finds the intermediate save that a rerun of the
// training opt describes continues from: the one of opt.Iteration in
// opt.OutDir with the most steps (fewer than opt.Steps) written by a run
// with the same options and parent. It returns the network, its Polyak
// average (nil when not saved) and the steps done, or step 0 when there
// is none. The latest save of a run with other options or another parent
// is an error: continuing it would mix two runs, and starting afresh
// would later remove it.
func LatestStepCheckpoint(opt Options) (net, avg *nets.Net, path string, step int, err error) {
	if opt.OutDir == "" {
		return nil, nil, "", 0, nil
	}
	saves, err := stepCheckpoints(opt.OutDir, opt.Iteration)
	if err != nil || len(saves) == 0 {
		return nil, nil, "", 0, err
	}
	optJSON, _ := json.Marshal(opt)
	parent := ""
	if opt.Parent != "" {
		parent = filepath.Base(opt.Parent)
	}
	best := -1
	for s := range saves {
		if s > best && s < opt.Steps {
			best = s
		}
	}
	if best <= 0 {
		return nil, nil, "", 0, nil
	}
	p, a := StepCheckpointPaths(opt.OutDir, opt.Iteration, best)
	n, info, err := LoadCheckpoint(p)
	if err != nil {
		return nil, nil, "", 0, fmt.Errorf("the intermediate save %s: %v (remove it to start the iteration afresh)", p, err)
	}
	if info.Options != string(optJSON) {
		// Name the flags that differ; options that compare equal as
		// settings but not as text (a float printed otherwise by an
		// older version) are still another run.
		var err error = errors.New("the options differ")
		if cs, cerr := rundir.Compare(json.RawMessage(info.Options), json.RawMessage(optJSON), optionFlags); cerr == nil && len(cs) > 0 {
			err = cs
		}
		return nil, nil, "", 0, fmt.Errorf("%s was saved by a run with other settings: %w; rerun with the same flags to continue it, or remove it", p, err)
	}
	if info.Parent != parent || info.Steps != opt.ParentInfo.Steps+int64(best) {
		return nil, nil, "", 0, fmt.Errorf("%s was saved by a run with another starting network; rerun with the same flags to continue it, or remove it", p)
	}
	if opt.Polyak > 0 {
		if avg, _, err = LoadCheckpoint(a); err != nil {
			return nil, nil, "", 0, fmt.Errorf("the Polyak average of the intermediate save %s: %v (remove both to start afresh)", p, err)
		}
	}
	return n, avg, p, best, nil
}

// LoadCheckpoint reads a network and its training metadata. A network
// without training metadata (from `canopy net init`) loads with the zero
// CheckpointInfo.
func LoadCheckpoint(path string) (*nets.Net, CheckpointInfo, error) {
	net, meta, err := nets.LoadWithMetadata(path)
	if err != nil {
		return nil, CheckpointInfo{}, err
	}
	info, _, err := ParseCheckpointInfo(meta)
	if err != nil {
		return nil, CheckpointInfo{}, fmt.Errorf("%s: %v", path, err)
	}
	return net, info, nil
}

// checkFinite reports the first parameter holding a NaN or an infinity.
func checkFinite(n *nets.Net) error {
	for _, p := range n.Params() {
		for i, v := range p.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("tensor %s holds %v at index %d", p.Name, v, i)
			}
		}
	}
	return nil
}
