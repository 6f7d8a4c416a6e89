package train

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An interrupted run with CheckpointEvery leaves its intermediate save
// under its own name (issue 46 item 7: it took the final name, and the
// rerun was refused); LatestStepCheckpoint finds it for the same
// options only, and the continued run ends with the final checkpoint
// and no intermediate save left.
func TestStepCheckpointsContinue(t *testing.T) {
	ds := loadTest(t, "tictactoe", 6, 14, true)
	out := t.TempDir()
	opt := DefaultOptions()
	opt.Steps, opt.Batch, opt.OutDir, opt.CheckpointEvery, opt.MetricsEvery = 20, 8, out, 5, 1
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Run(ctx, tinyNet(t, ds.Game(), 5), ds, opt, func(m Metrics) {
		if m.Step == 12 {
			cancel()
		}
	})
	if err == nil {
		t.Fatal("the canceled run finished")
	}
	final, _ := CheckpointPaths(out, opt.Iteration)
	if _, err := os.Stat(final); err == nil {
		t.Fatal("an intermediate save took the final checkpoint's name")
	}
	other := opt
	other.Seed++
	want := fmt.Sprintf("these settings differ from the run's: --seed %d (run: %d)", other.Seed, opt.Seed)
	if _, _, _, _, err := LatestStepCheckpoint(other); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a save of other options: %v, want an error naming the flag (%s)", err, want)
	}
	net, avg, _, step, err := LatestStepCheckpoint(opt)
	if err != nil || step != 10 || net == nil || avg == nil {
		t.Fatalf("LatestStepCheckpoint: step %d, %v", step, err)
	}
	opt.StartStep, opt.Average = step, avg
	res, err := Run(context.Background(), net, ds, opt, nil)
	if err != nil || res.Checkpoint != final {
		t.Fatalf("continued run: %+v, %v", res, err)
	}
	if _, info, err := LoadCheckpoint(final); err != nil || info.Steps != 20 {
		t.Errorf("final checkpoint: %+v, %v", info, err)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*.step-*")); len(m) > 0 {
		t.Errorf("intermediate saves left: %v", m)
	}
}
