package cudabackend

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/cuda"
	"github.com/canopy-go/canopy/cuda/fakecuda"
)

// fake says whether this test binary runs on the emulated CUDA device
// (cuda/fakecuda) and why; TestMain sets it.
var fake fakecuda.Status

// TestMain builds the emulated CUDA device (the same build as package
// cuda's tests: net.cu and the self-test kernel) and points the library
// search at it, unless a real GPU or CANOPY_CUDA_LIBS is there.
func TestMain(m *testing.M) {
	st, err := fakecuda.Setup(fakecuda.Source{Name: "saxpy.cu", Text: cuda.SelfTestKernels})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cudabackend tests:", err)
		os.Exit(1)
	}
	fake = st
	os.Exit(m.Run())
}

// childEnv names the child process a test runs itself in (runChild).
const childEnv = "CANOPY_CUDABACKEND_TEST_CHILD"

// inChild reports whether this process is the child run of the named test.
func inChild(name string) bool { return os.Getenv(childEnv) == name }

// runChild runs test name alone in a child process of this test binary
// (the library search and the emulated device are fixed per process) with
// env changes: "KEY=VALUE" sets, "KEY=" removes. The child's output is
// logged; its failure fails t.
func runChild(t *testing.T, name string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	drop := map[string]bool{}
	var add []string
	for _, kv := range append(env, childEnv+"="+name) {
		k, v, _ := strings.Cut(kv, "=")
		drop[k] = true
		if v != "" {
			add = append(add, kv)
		}
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, add...)
	out, err := cmd.CombinedOutput()
	t.Logf("child %s (%s):\n%s", name, strings.Join(env, " "), out)
	if err != nil {
		t.Fatalf("child %s: %v", name, err)
	}
	if strings.Contains(string(out), "--- SKIP: "+name) {
		t.Fatalf("child %s skipped", name)
	}
}

// checkNoViolations fails t when the emulated device recorded a race.
func checkNoViolations(t *testing.T) {
	t.Helper()
	if !fake.Active() {
		return
	}
	v, err := fakecuda.Violations(fake.Dir)
	if err != nil || len(v) > 0 {
		t.Errorf("the emulated device found violations: %q %v", v, err)
	}
}
