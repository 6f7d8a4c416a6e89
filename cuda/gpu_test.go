package cuda

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/canopy-go/canopy/cuda/fakecuda"
)

// openTestDevice opens device 0 or skips the test with the loader's reason.
func openTestDevice(t *testing.T) *Device {
	t.Helper()
	if _, err := Load(); err != nil {
		fake.NoGPU(t, err)
	}
	d, err := Open(0)
	if err != nil {
		if fake.Active() {
			t.Fatalf("the emulated device does not open: %v", err)
		}
		t.Skipf("no usable GPU: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestGPUSelfTest(t *testing.T) {
	d := openTestDevice(t)
	t.Logf("device %+v", d.Info())
	if fake.Active() {
		fakecuda.Report(fake.Dir, true) // forget what earlier tests provoked
		defer func() {
			if v, err := fakecuda.Violations(fake.Dir); err != nil || len(v) > 0 {
				t.Errorf("the emulated device found violations: %q %v", v, err)
			}
		}()
	}
	for _, r := range SelfTest(d) {
		if !r.OK {
			t.Errorf("%s: %s (max diff %g)", r.Name, r.Detail, r.MaxAbsDiff)
		} else {
			t.Logf("%s ok: %s (max diff %g, %.2f ms)", r.Name, r.Detail, r.MaxAbsDiff, r.Millis)
		}
	}
}

func TestGPUTF32Gemm(t *testing.T) {
	d := openTestDevice(t)
	err := d.Do(func(c *Ctx) error {
		diff, err := gemmCheck(c, rand.New(rand.NewPCG(5, 6)), false, false, 64, 48, 256, Compute32FFastTF32)
		if err != nil {
			return err
		}
		// TF32 keeps 10 mantissa bits: about 1e-3 relative per product,
		// sums of 256 products of N(0,1) values stay well under 0.5.
		if diff > 0.5 {
			t.Errorf("TF32 GemmEx max diff %g", diff)
		}
		t.Logf("TF32 max diff %g", diff)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGPUDoFromManyGoroutines(t *testing.T) {
	d := openTestDevice(t)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			errs <- d.Do(func(c *Ctx) error {
				p, err := c.Alloc(4 * 1024)
				if err != nil {
					return err
				}
				defer c.Free(p)
				in := make([]float32, 1024)
				for j := range in {
					in[j] = float32(i*1024 + j)
				}
				if err := c.CopyHtoD(p, in); err != nil {
					return err
				}
				out := make([]float32, 1024)
				if err := c.CopyDtoH(out, p); err != nil {
					return err
				}
				for j := range in {
					if in[j] != out[j] {
						t.Errorf("goroutine %d: element %d = %v", i, j, out[j])
						break
					}
				}
				return nil
			})
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestGPUErrorsNameTheCall(t *testing.T) {
	d := openTestDevice(t)
	err := d.Do(func(c *Ctx) error {
		_, err := c.Alloc(1 << 62) // far beyond any GPU
		return err
	})
	if err == nil {
		t.Fatal("allocating 4 EiB succeeded")
	}
	t.Logf("expected failure: %v", err)
	if got := err.Error(); len(got) < 20 || got[:19] != "cuda: cuMemAlloc_v2" {
		t.Errorf("error %q does not name cuMemAlloc_v2", got)
	}
}

// TestRegisterHost page-locks Go memory, copies through it asynchronously
// both ways, and checks the driver's refusals: a second registration of
// the same memory, and freeing it twice.
func TestRegisterHost(t *testing.T) {
	d := openTestDevice(t)
	err := d.Do(func(c *Ctx) error {
		const n = 3000 // not a whole number of pages
		raw := make([]float32, n+2048)
		buf := raw[1024-int(uintptr(unsafe.Pointer(&raw[0]))%4096)/4:][:n]
		for i := range buf {
			buf[i] = float32(i) - 7.5
		}
		want := slices.Clone(buf)
		h, err := c.RegisterHost(buf)
		if err != nil {
			return err
		}
		if off, ok := h.Contains(buf[10:20]); !ok || off != 40 {
			t.Errorf("Contains(buf[10:20]) = %d, %v; want 40, true", off, ok)
		}
		if _, ok := h.Contains(make([]float32, 4)); ok {
			t.Error("Contains reports other memory inside the buffer")
		}
		if _, err := c.RegisterHost(buf[:100]); err == nil {
			t.Error("registering registered memory again succeeded")
		}
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer c.DestroyStream(s)
		p, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(p)
		if err := c.CopyHtoDAsync(p, h, 0, 4*n, s); err != nil {
			return err
		}
		if err := c.SyncStream(s); err != nil {
			return err
		}
		clear(buf)
		if err := c.CopyDtoHAsync(h, 0, p, 4*n, s); err != nil {
			return err
		}
		if err := c.SyncStream(s); err != nil {
			return err
		}
		if !slices.Equal(buf, want) {
			t.Error("the round trip through registered memory changed the values")
		}
		if err := c.FreeHost(h); err != nil {
			return err
		}
		if err := c.check("cuMemHostUnregister", c.d.libs.drv.cuMemHostUnregister(unsafe.Pointer(&buf[0]))); err == nil {
			t.Error("unregistering twice succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
