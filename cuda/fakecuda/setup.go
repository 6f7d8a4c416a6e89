package fakecuda

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// Status says whether a test binary runs against the emulated device.
type Status struct {
	Dir    string // the emulated device's folder; "" when it is not used
	Reason string // what is used and why, for test logs and skip messages
}

// Active reports whether the emulated device is in use.
func (s Status) Active() bool { return s.Dir != "" }

// NoGPU ends a test that found no usable device (err says why): it skips
// when there is neither a GPU nor the emulation, and fails when the
// emulation is active, since then its libraries must load (a test that
// skipped there would pass on a broken emulated device).
func (s Status) NoGPU(t testing.TB, err error) {
	t.Helper()
	if s.Active() {
		t.Fatalf("the emulated device (%s) does not load: %v", s.Dir, err)
	}
	t.Skipf("no GPU (%s): %v", s.Reason, err)
}

// nvidiaDevice is the control node every NVIDIA kernel driver creates.
const nvidiaDevice = "/dev/nvidiactl"

// Setup prepares a test binary; call it from TestMain before anything
// loads package cuda. The emulated device is used unless
// CANOPY_FAKECUDA=off, CANOPY_CUDA_LIBS is set (its libraries are used),
// or an NVIDIA driver is installed (/dev/nvidiactl: the real GPU is
// tested). Otherwise Setup builds it (see Build), points CANOPY_CUDA_LIBS
// at it and sets CANOPY_CUDA_CACHE=off, so that every module is compiled
// by the emulated NVRTC rather than read from a cache. Without a C++
// compiler the Status says so and the error is nil: the tests then skip
// as on a machine without a GPU. A failed build is an error.
func Setup(extra ...Source) (Status, error) {
	switch {
	case os.Getenv("CANOPY_FAKECUDA") == "off":
		return Status{Reason: "emulated CUDA device off (CANOPY_FAKECUDA=off)"}, nil
	case os.Getenv("CANOPY_CUDA_LIBS") != "":
		return Status{Reason: "CANOPY_CUDA_LIBS is set: testing the libraries there, not the emulated device"}, nil
	}
	if _, err := os.Stat(nvidiaDevice); err == nil {
		return Status{Reason: "an NVIDIA driver is installed (" + nvidiaDevice + "): testing the real GPU"}, nil
	}
	dir, err := Build(extra...)
	if errors.Is(err, ErrNoCompiler) {
		return Status{Reason: "no emulated CUDA device: " + err.Error()}, nil
	}
	if err != nil {
		return Status{}, err
	}
	os.Setenv("CANOPY_CUDA_LIBS", dir)
	os.Setenv("CANOPY_CUDA_CACHE", "off")
	profile := os.Getenv("FAKECUDA_PROFILE")
	if profile == "" {
		profile = "h100"
	}
	return Status{Dir: dir, Reason: "emulated CUDA device (fakecuda, profile " + profile + ") in " + dir}, nil
}

// Report returns the lines the emulated driver of dir recorded in this
// process: "error NAME: ..." for each refused call and "violation: ..."
// for each race it found. reset empties the record.
func Report(dir string, reset bool) ([]string, error) {
	s, err := reportText(dir, reset)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// Violations returns the "violation: " lines of Report.
func Violations(dir string) ([]string, error) {
	lines, err := Report(dir, false)
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "violation: ") {
			out = append(out, l)
		}
	}
	return out, err
}
