package cuda

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/canopy-go/canopy/cuda/fakecuda"
)

// These tests run only on the emulated device: each breaks one rule that a
// real driver or cuBLAS enforces (or that silently corrupts results on a
// real GPU) and checks that the emulation catches it, so that the
// emulation's silence in the other tests means something.

func openFakeDevice(t *testing.T) *Device {
	t.Helper()
	if !fake.Active() {
		t.Skipf("not on the emulated device: %s", fake.Reason)
	}
	return openTestDevice(t)
}

// wantCode checks that err is an *Error with the given name.
func wantCode(t *testing.T, what string, err error, name string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Name != name {
		t.Errorf("%s: got %v, want %s", what, err, name)
		return
	}
	t.Logf("%s: %v", what, err)
}

func TestFakeNVRTCMatchesDriverAndLoadsBuiltins(t *testing.T) {
	d := openFakeDevice(t)
	l := d.Libs()
	// The folder holds libnvrtc.so.13 and libnvrtc.so.12; the driver is
	// CUDA 12.4, so 12 must be chosen although 13 comes first.
	if l.NVRTCVersion[0] != 12 {
		t.Errorf("NVRTC %v chosen for driver %d: %s", l.NVRTCVersion, l.DriverVersion, l.NVRTCChoice)
	}
	for _, s := range []string{"libnvrtc.so.12 (NVRTC 12.4) for driver CUDA 12.4", "passed over", "libnvrtc.so.13: NVRTC 13.0 is newer than the driver", "builtins " + fake.Dir + "/libnvrtc-builtins.so.12.4"} {
		if !strings.Contains(l.NVRTCChoice, s) {
			t.Errorf("choice %q lacks %q", l.NVRTCChoice, s)
		}
	}
	// The emulated NVRTC dlopens libnvrtc-builtins.so.12.4 by name; the
	// folder is not on the loader path, so this compiles only because
	// Load loaded the builtins from it.
	err := d.Do(func(c *Ctx) error {
		m, _, err := c.CompileForDevice("saxpy.cu", SelfTestKernels)
		if err == nil {
			c.UnloadModule(m)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFakeCatchesMisuse(t *testing.T) {
	d := openFakeDevice(t)
	drv := &d.libs.drv

	// A call from a thread without the context current.
	r := make(chan int32)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var p uint64
		r <- drv.cuMemAlloc(&p, 16)
	}()
	wantCode(t, "cuMemAlloc off the device thread", d.libs.check("cuMemAlloc_v2", <-r), "CUDA_ERROR_INVALID_CONTEXT")

	err := d.Do(func(c *Ctx) error {
		m, _, err := c.CompileForDevice("saxpy.cu", SelfTestKernels)
		if err != nil {
			return err
		}
		defer c.UnloadModule(m)
		f, err := c.Function(m, "saxpy")
		if err != nil {
			return err
		}
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer c.DestroyStream(s)
		const n = 1000
		x, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(x)
		y, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(y)
		host := make([]float32, n)
		launch := func(block, count int) error {
			return c.Launch(f, Dim3{X: Grid1D(count, block, 1<<20)}, Dim3{X: block}, 0, s, c.Args().Float32(1).Ptr(x).Ptr(y).Int(count))
		}

		// Issue 17, item 1: a synchronous copy from pageable memory, then a
		// kernel on a non-blocking stream that does not wait for it.
		err = c.check("cuMemcpyHtoD_v2", drv.cuMemcpyHtoD(uint64(x), unsafe.Pointer(&host[0]), 4*n))
		runtime.KeepAlive(host)
		if err != nil {
			return err
		}
		err = launch(256, n)
		wantCode(t, "kernel after an unsynchronised upload", err, "CUDA_ERROR_ILLEGAL_STATE")
		if err == nil || !strings.Contains(err.Error(), "race: kernel saxpy on non-blocking stream") {
			t.Errorf("race not described: %v", err)
		}
		// CopyHtoD synchronises, so the same sequence is clean.
		if err := c.CopyHtoD(x, host); err != nil {
			return err
		}
		if err := c.CopyHtoD(y, host); err != nil {
			return err
		}
		if err := launch(256, n); err != nil {
			t.Errorf("kernel after CopyHtoD: %v", err)
		}
		if err := c.SyncStream(s); err != nil {
			return err
		}

		// Asynchronous copies need page-locked memory.
		wantCode(t, "async copy from Go memory", c.check("cuMemcpyHtoDAsync_v2",
			drv.cuMemcpyHtoDAsync(uint64(x), unsafe.Pointer(&host[0]), 16, uintptr(s))), "CUDA_ERROR_INVALID_VALUE")

		// Their host bytes must stay as they are until a synchronisation
		// completes the copy (the self-test once cleared them too early and
		// uploaded zeros on a real GPU).
		pin, err := c.AllocHost(4 * n)
		if err != nil {
			return err
		}
		defer c.FreeHost(pin)
		if err := c.CopyHtoDAsync(x, pin, 0, 4*n, s); err != nil {
			return err
		}
		pin.Float32s()[7] = 1
		err = c.SyncStream(s)
		wantCode(t, "pinned buffer changed before the sync", err, "CUDA_ERROR_ILLEGAL_STATE")
		if err == nil || !strings.Contains(err.Error(), "changed before a synchronisation completed the copy") {
			t.Errorf("host-buffer race not described: %v", err)
		}
		if err := c.CopyHtoDAsync(x, pin, 0, 4*n, s); err != nil {
			return err
		}
		if err := c.SyncStream(s); err != nil {
			t.Errorf("sync of an untouched upload: %v", err)
		}
		pin.Float32s()[7] = 2 // after the sync: allowed
		if err := c.SyncStream(s); err != nil {
			t.Errorf("change after the sync reported: %v", err)
		}

		// Launch limits.
		wantCode(t, "2048 threads per block", launch(2048, n), "CUDA_ERROR_INVALID_VALUE")

		// cuBLAS leading dimensions: row-major A is 8 x 8 with lda 4.
		bl, err := c.NewBlas(s)
		if err != nil {
			return err
		}
		defer bl.Destroy()
		err = bl.Sgemm(false, false, 8, 8, 8, 1, x, 4, y, 8, 0, y, 8)
		var e *Error
		if !errors.As(err, &e) || e.Name != "CUBLAS_STATUS_INVALID_VALUE" {
			t.Errorf("Sgemm with lda < k: %v, want CUBLAS_STATUS_INVALID_VALUE", err)
		}

		// Graph capture: synchronising the capturing stream invalidates it.
		_, err = c.Capture(s, func() error { return c.SyncStream(s) })
		if err == nil || !strings.Contains(err.Error(), "cuStreamSynchronize: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED") ||
			!strings.Contains(err.Error(), "cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED") {
			t.Errorf("sync during capture: %v, want the sync refused and the capture invalidated", err)
		}

		// A kernel writing past the end of an allocation: the guard bytes
		// catch it and the context's error is sticky, as on a GPU.
		err = launch(256, n+1)
		wantCode(t, "write past the end", err, "CUDA_ERROR_ILLEGAL_ADDRESS")
		_, err = c.Alloc(16)
		wantCode(t, "after a fault", err, "CUDA_ERROR_ILLEGAL_ADDRESS")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lines, err := fakecuda.Report(fake.Dir, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		t.Logf("report: %s", l)
	}
}
