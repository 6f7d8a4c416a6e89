// Package fakecuda builds an emulated CUDA device for tests: stand-ins for
// libcuda.so.1, libnvrtc.so.{12,13}, libnvrtc-builtins, libcublas.so.12
// and libcublasLt.so.12, compiled from the C++ sources in csrc/ by the
// system C++ compiler into one folder that CANOPY_CUDA_LIBS points package
// cuda at. Package cuda then loads them with dlopen exactly as it loads the
// NVIDIA libraries, so every binding, the device thread, pinned buffers,
// streams, graphs and the cudabackend network run unchanged on a machine
// without a GPU.
//
// It is for: tests of package cuda, nets/cudabackend and cmd/gpucheck in
// every CI run. It is not for: speed (kernels run serially on the host) or
// for proving cuBLAS's own numerics; those need a real GPU (make gpu-check).
//
// # What the emulation is
//
// The kernels are the real CUDA sources (kernels/cudasrc and any passed to
// Build) compiled as host C++ through csrc/shim.h: a launch runs the kernel
// function once per (block, thread), blocks in turn and the threads of a
// block as a loop. The emulated NVRTC returns an image naming the source's
// hash and the target; the emulated driver loads only images of sources it
// was built with, for its architecture. GEMMs run on the host with exact
// TF32/FP16/BF16 input rounding and float accumulation.
//
// What it checks, failing the call as a real driver or cuBLAS would, or
// recording a violation where a real GPU would silently compute garbage, is
// listed in csrc/driver.cc and csrc/cublas.cc; in short: a current context
// on the calling thread, guard bytes around device allocations, pinned host
// memory for asynchronous copies, ordering between the legacy default
// stream and non-blocking streams, graph-capture rules, launch limits,
// cuBLAS leading dimensions, and the NVRTC/driver version match.
//
// # Profiles and settings
//
// The emulated library reads, when the driver is initialised:
//
//	FAKECUDA_PROFILE=h100|t4      the GPU: H100 (sm_90, 132 SMs, 80 GB; default) or T4 (sm_75, 40 SMs, 16 GB)
//	FAKECUDA_DRIVER_VERSION=12040 cuDriverGetVersion (CUDA 12.4; NVRTC 13 images then fail to load)
//	FAKECUDA_STRICT=0             record races without failing the call
//
// Report returns what the emulated driver refused or flagged.
package fakecuda

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/canopy-go/canopy/kernels/cudasrc"
)

//go:embed csrc/*.h csrc/*.cc
var csrc embed.FS

// Source is CUDA C++ to compile into the emulated device besides the files
// of kernels/cudasrc (for example a test's own kernel). NVRTC programs are
// matched to it by the exact text.
type Source struct {
	Name string // file name, e.g. "saxpy.cu"
	Text string
}

// ErrNoCompiler is returned by Build where no C++ compiler is found.
var ErrNoCompiler = errors.New("fakecuda: no C++ compiler found (install g++ or set CXX)")

// buildVersion changes whenever the build recipe does, so that cached
// builds of an older recipe are not reused.
const buildVersion = "fakecuda-build/1"

// compiler returns the C++ compiler: $CXX, else g++, else c++.
func compiler() (string, error) {
	if cxx := os.Getenv("CXX"); cxx != "" {
		return exec.LookPath(cxx)
	}
	for _, c := range []string{"g++", "c++"} {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", ErrNoCompiler
}

var kernelName = regexp.MustCompile(`extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(`)

// KernelNames lists the extern "C" __global__ functions of a CUDA source,
// in order: the kernels the emulated driver will know by name.
func KernelNames(src string) []string {
	var out []string
	for _, m := range kernelName.FindAllStringSubmatch(src, -1) {
		out = append(out, m[1])
	}
	return out
}

// SourceHash is the FNV-1a 64 hash of a source text, as the emulated NVRTC
// computes it.
func SourceHash(src string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(src))
	return h.Sum64()
}

// allSources returns kernels/cudasrc's files followed by extra, sorted by
// name, without duplicates of the same text.
func allSources(extra []Source) ([]Source, error) {
	var out []Source
	for _, n := range cudasrc.Names() {
		s, err := cudasrc.Source(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Source{n, s})
	}
	out = append(out, extra...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	seen := map[uint64]bool{}
	dedup := out[:0]
	for _, s := range out {
		if h := SourceHash(s.Text); !seen[h] {
			seen[h] = true
			dedup = append(dedup, s)
		}
	}
	return dedup, nil
}

// cacheRoot is where built devices are kept between test runs.
func cacheRoot() string {
	if d := os.Getenv("CANOPY_FAKECUDA_CACHE"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "canopy", "fakecuda")
}

// buildMu serialises builds within a process; a file lock serialises them
// between processes (go test runs packages in parallel).
var buildMu sync.Mutex

// Build compiles the emulated device with the kernels of kernels/cudasrc
// and extra, and returns the folder holding the libraries. Builds are
// cached by the hash of every input (sources, recipe, compiler version),
// so a second call, or a second test binary, reuses the first build.
func Build(extra ...Source) (string, error) {
	cxx, err := compiler()
	if err != nil {
		return "", err
	}
	srcs, err := allSources(extra)
	if err != nil {
		return "", err
	}
	ver, err := exec.Command(cxx, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("fakecuda: %s --version: %v", cxx, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", buildVersion, cxx, ver)
	fs.WalkDir(csrc, "csrc", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := csrc.ReadFile(p)
			fmt.Fprintf(h, "%s %d\n%s", p, len(b), b)
		}
		return nil
	})
	for _, s := range srcs {
		fmt.Fprintf(h, "%s %d\n%s", s.Name, len(s.Text), s.Text)
	}
	key := hex.EncodeToString(h.Sum(nil))[:20]
	root := cacheRoot()
	dir := filepath.Join(root, key)
	if done(dir) {
		return dir, nil
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("fakecuda: %v", err)
	}
	unlock, err := lockFile(filepath.Join(root, key+".lock"))
	if err != nil {
		return "", fmt.Errorf("fakecuda: %v", err)
	}
	defer unlock()
	if done(dir) { // built by another process while we waited
		return dir, nil
	}
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		return "", fmt.Errorf("fakecuda: %v", err)
	}
	defer os.RemoveAll(tmp)
	if err := build(cxx, tmp, srcs); err != nil {
		return "", err
	}
	os.RemoveAll(dir) // a partial folder from a killed build
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("fakecuda: %v", err)
	}
	return dir, nil
}

// done reports whether dir holds a finished build.
func done(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "BUILT"))
	return err == nil
}

// build compiles everything into dir: the objects in parallel, then the
// libraries.
func build(cxx, dir string, srcs []Source) error {
	err := fs.WalkDir(csrc, "csrc", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := csrc.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("fakecuda: %v", err)
	}
	kernelObjs := []string{}
	type job struct {
		out  string
		args []string
	}
	cflags := []string{"-std=c++17", "-O2", "-fPIC", "-Wall", "-Wno-unused-function", "-Wno-unused-variable", "-c"}
	jobs := []job{
		{"driver.o", []string{"driver.cc"}},
		{"cublas.o", []string{"-O3", "cublas.cc"}},
		{"nvrtc12.o", []string{"-DFAKE_NVRTC_MAJOR=12", "-DFAKE_NVRTC_MINOR=4", "nvrtc.cc"}},
		{"nvrtc13.o", []string{"-DFAKE_NVRTC_MAJOR=13", "-DFAKE_NVRTC_MINOR=0", "nvrtc.cc"}},
		{"stub.o", []string{"stub.cc"}},
	}
	for i, s := range srcs {
		cu := fmt.Sprintf("src_%d.cu", i)
		if err := os.WriteFile(filepath.Join(dir, cu), []byte(s.Text), 0o644); err != nil {
			return fmt.Errorf("fakecuda: %v", err)
		}
		hash := SourceHash(s.Text)
		var b bytes.Buffer
		fmt.Fprintf(&b, "// Generated by fakecuda.Build from %s. DO NOT EDIT.\n#include \"shim.h\"\n#include %q\n\n", s.Name, cu)
		fmt.Fprintf(&b, "FAKECUDA_SOURCE(%d, %q, 0x%016xULL)\n", i, s.Name, hash)
		for _, k := range KernelNames(s.Text) {
			fmt.Fprintf(&b, "FAKECUDA_KERNEL(0x%016xULL, %s)\n", hash, k)
		}
		cc := fmt.Sprintf("kern_%d.cc", i)
		if err := os.WriteFile(filepath.Join(dir, cc), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("fakecuda: %v", err)
		}
		obj := fmt.Sprintf("kern_%d.o", i)
		kernelObjs = append(kernelObjs, obj)
		jobs = append(jobs, job{obj, []string{cc}})
	}
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, 2)
	for i, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = run(cxx, dir, append(append(append([]string{}, cflags...), j.args...), "-o", j.out)...)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	shared := func(out, soname string, in ...string) []string {
		return append(append([]string{"-shared", "-o", out, "-Wl,-soname," + soname}, in...), "-ldl", "-lpthread")
	}
	links := [][]string{
		shared("libcuda.so.1", "libcuda.so.1", append([]string{"driver.o"}, kernelObjs...)...),
		shared("libcublas.so.12", "libcublas.so.12", "cublas.o", "-L.", "-l:libcuda.so.1", "-Wl,-rpath,$ORIGIN"),
		shared("libcublasLt.so.12", "libcublasLt.so.12", "stub.o"),
		shared("libnvrtc.so.12", "libnvrtc.so.12", "nvrtc12.o"),
		shared("libnvrtc.so.13", "libnvrtc.so.13", "nvrtc13.o"),
		shared("libnvrtc-builtins.so.12.4", "libnvrtc-builtins.so.12.4", "stub.o"),
		shared("libnvrtc-builtins.so.13.0", "libnvrtc-builtins.so.13.0", "stub.o"),
	}
	for _, l := range links {
		if err := run(cxx, dir, l...); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "BUILT"), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644)
}

// run runs the compiler in dir; its error carries the compiler's output.
func run(cxx, dir string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cxx, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 4000 {
			msg = msg[:4000] + "\n..."
		}
		return fmt.Errorf("fakecuda: %s %s: %v\n%s", filepath.Base(cxx), strings.Join(args, " "), err, msg)
	}
	return nil
}
