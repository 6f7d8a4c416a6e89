package cuda

import (
	"fmt"
	"os"
	"testing"

	"github.com/canopy-go/canopy/cuda/fakecuda"
)

// fake says whether this test binary runs on the emulated device
// (cuda/fakecuda) and why; TestMain sets it.
var fake fakecuda.Status

// TestMain builds the emulated CUDA device and points the library search
// at it, unless a real GPU or CANOPY_CUDA_LIBS is there (see
// fakecuda.Setup). It must run before anything calls Load.
func TestMain(m *testing.M) {
	st, err := fakecuda.Setup(fakecuda.Source{Name: "saxpy.cu", Text: SelfTestKernels})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cuda tests:", err)
		os.Exit(1)
	}
	fake = st
	os.Exit(m.Run())
}
