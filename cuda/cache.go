package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/canopy-go/canopy/internal/atomicfile"
)

// CacheKey identifies one compiled image: the SHA-256 of the source, the
// kernel file name, the target, the NVRTC options, the driver version and
// the NVRTC version. Any change to one of them gives a different key.
func CacheKey(name, src string, t Target, driverVersion int, nvrtcVersion [2]int) string {
	h := sha256.New()
	// Length-prefixed fields, so that no two field lists hash alike.
	write := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	write("canopy-cuda-cache/1")
	write(name)
	write(src)
	write(strings.Join(NVRTCOptions(t), " "))
	write(fmt.Sprintf("arch=%d cubin=%v driver=%d nvrtc=%d.%d", t.Arch, t.Cubin, driverVersion, nvrtcVersion[0], nvrtcVersion[1]))
	return hex.EncodeToString(h.Sum(nil))
}

// CacheDir returns the directory of compiled kernels: $CANOPY_CUDA_CACHE
// if set ("off" disables the cache: ""), else
// os.UserCacheDir()/canopy/cuda.
func CacheDir() string {
	if d := os.Getenv("CANOPY_CUDA_CACHE"); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "canopy", "cuda")
}

func cacheExt(t Target) string {
	if t.Cubin {
		return ".cubin"
	}
	return ".ptx"
}

// readCache returns the cached image for key, or nil.
func readCache(dir, key string, t Target) []byte {
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, key+cacheExt(t)))
	if err != nil || len(b) == 0 {
		return nil
	}
	return b
}

// writeCache stores image under key atomically: it writes a temporary file
// in the same directory, syncs it and renames it into place, so readers
// see either no file or the whole image, and concurrent writers of the
// same key are harmless (the last rename wins with identical content).
func writeCache(dir, key string, t Target, image []byte) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, key+cacheExt(t)), image)
}

// CompileCached is Compile with the disk cache in CacheDir. A cache that
// cannot be written is not an error (the image is still returned).
func (l *Libs) CompileCached(name, src string, t Target) ([]byte, error) {
	dir := CacheDir()
	key := CacheKey(name, src, t, l.DriverVersion, l.NVRTCVersion)
	if b := readCache(dir, key, t); b != nil {
		return b, nil
	}
	img, _, err := l.Compile(name, src, t)
	if err != nil {
		return nil, err
	}
	// Best effort: an unwritable cache only costs a recompile next time.
	_ = writeCache(dir, key, t, img)
	return img, nil
}

// CompileForDevice compiles src for d's architecture (CompileCached with
// ChooseTarget) and loads it as a module. Call it on the device thread.
func (c *Ctx) CompileForDevice(name, src string) (Module, Target, error) {
	l := c.d.libs
	archs, err := l.SupportedArchs()
	if err != nil {
		return 0, Target{}, err
	}
	t, err := ChooseTarget(c.d.info.Arch(), archs)
	if err != nil {
		return 0, t, err
	}
	img, err := l.CompileCached(name, src, t)
	if err != nil {
		return 0, t, err
	}
	if !t.Cubin && img[len(img)-1] != 0 { // PTX must be NUL-terminated for cuModuleLoadData
		img = append(img, 0)
	}
	m, err := c.LoadModule(img)
	return m, t, err
}
