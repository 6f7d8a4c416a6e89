package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/kernels"
	"github.com/canopy-go/canopy/zero"
)

// zero --precision bf16: refused with an error that says why on kernels
// without AVX-512 BF16 (the portable ones stand in for such a CPU here);
// where the CPU has them, the run records it in zero.json, and a
// continuation given no --precision keeps it.
func TestZeroPrecisionBF16(t *testing.T) {
	args := func(out string, extra ...string) []string {
		return append([]string{"zero", "--game", "tictactoe", "--games", "2", "--trees", "2", "--sims", "4", "--steps", "2",
			"--batch", "8", "--eval-games", "0", "--solver-positions", "0", "--backend", "cpu", "--quiet", "--out", out}, extra...)
	}
	t.Run("refused without AVX-512 BF16", func(t *testing.T) {
		restore, err := kernels.Use("generic")
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "run")
		code, _, errs := runCLI(t, "", args(out, "--precision", "bf16", "--iterations", "1")...)
		restore()
		if code == 0 || !strings.Contains(errs, "AVX-512 BF16") || !strings.Contains(errs, "fp32") {
			t.Errorf("status %d, stderr %q; want a refusal naming AVX-512 BF16 and fp32", code, errs)
		}
		if _, err := os.Stat(filepath.Join(out, zero.ConfigName)); err == nil {
			t.Errorf("the refused run stored its settings")
		}
	})
	t.Run("recorded and kept", func(t *testing.T) {
		if kernels.BF16Kernels() != "avx512bf16" {
			t.Skip("this CPU has no AVX-512 BF16")
		}
		out := filepath.Join(t.TempDir(), "run")
		if code, _, errs := runCLI(t, "", args(out, "--precision", "bf16", "--iterations", "1")...); code != 0 {
			t.Fatalf("status %d: %s", code, tail(errs))
		}
		// Continued without --precision: the stored setting holds.
		if code, _, errs := runCLI(t, "", "zero", "--out", out, "--more", "1", "--quiet"); code != 0 {
			t.Fatalf("continuation: status %d: %s", code, tail(errs))
		}
		c, ok, err := zero.LoadConfig(out)
		if err != nil || !ok || c.Train.Precision.String() != "bf16" {
			t.Errorf("stored settings: precision %v (found %v, %v), want bf16", c.Train.Precision, ok, err)
		}
		if n, err := zero.Finished(out); n != 2 || err != nil {
			t.Errorf("finished %d iterations (%v), want 2", n, err)
		}
		// Changing it on a continuation is refused, naming the flag.
		code, _, errs := runCLI(t, "", "zero", "--out", out, "--more", "1", "--quiet", "--precision", "fp32")
		if code == 0 || !strings.Contains(errs, "precision") {
			t.Errorf("continuation with --precision fp32: status %d, stderr %q; want a refusal naming precision", code, errs)
		}
	})
}
