package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// libSpec names one library and its acceptable file names, preferred
// first (the newest ABI version first).
type libSpec struct {
	what  string   // "CUDA driver", "NVRTC", ...
	names []string // e.g. libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so
}

var (
	specDriver = libSpec{"CUDA driver", []string{"libcuda.so.1", "libcuda.so"}}
	specNVRTC  = libSpec{"NVRTC", []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}} // 11.2: the soname of every CUDA 11.x NVRTC (Debian 12 non-free ships 11.8)
	specLt     = libSpec{"cuBLASLt", []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}}
	specCublas = libSpec{"cuBLAS", []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so"}}
)

// searchEnv is what the library search reads from the outside world; tests
// replace it.
type searchEnv struct {
	getenv func(string) string
	glob   func(string) ([]string, error)
	exists func(string) bool
	open   func(path string) (uintptr, error) // dlopen
}

// loaderDefault marks a candidate that is a bare file name handed to the
// dynamic loader, which then searches LD_LIBRARY_PATH, ld.so.cache and the
// system directories itself.
const loaderDefault = ""

// searchDirs returns the directories to search, in order, with
// loaderDefault standing for the dynamic loader's own search. Entries of
// CANOPY_CUDA_LIBS that are files are returned as they are; candidates
// decides whether such a file fits a library.
func searchDirs(env searchEnv) []string {
	var dirs []string
	if v := env.getenv("CANOPY_CUDA_LIBS"); v != "" {
		for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ',' }) {
			if p = strings.TrimSpace(p); p != "" {
				dirs = append(dirs, p)
			}
		}
	}
	dirs = append(dirs, loaderDefault)
	for _, e := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if h := env.getenv(e); h != "" {
			dirs = append(dirs, filepath.Join(h, "lib64"), filepath.Join(h, "lib"), filepath.Join(h, "targets", "x86_64-linux", "lib"))
		}
	}
	dirs = append(dirs, "/usr/local/cuda/lib64")
	if matches, err := env.glob("/usr/local/cuda-*/lib64"); err == nil {
		sortNewestFirst(matches)
		dirs = append(dirs, matches...)
	}
	dirs = append(dirs, "/usr/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64")
	// Drop duplicates, keeping the first occurrence.
	seen := map[string]bool{}
	out := dirs[:0]
	for _, d := range dirs {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// sortNewestFirst orders /usr/local/cuda-X.Y/lib64 paths by descending
// version, compared numerically field by field (12.10 > 12.9).
func sortNewestFirst(paths []string) {
	ver := func(p string) []int {
		base := filepath.Base(filepath.Dir(p)) // cuda-12.4
		var v []int
		for _, f := range strings.Split(strings.TrimPrefix(base, "cuda-"), ".") {
			n, err := strconv.Atoi(f)
			if err != nil {
				n = -1
			}
			v = append(v, n)
		}
		return v
	}
	sort.SliceStable(paths, func(i, j int) bool {
		a, b := ver(paths[i]), ver(paths[j])
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] > b[k]
			}
		}
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return paths[i] < paths[j]
	})
}

// candidates lists the paths to try for spec: for each file name (newest
// version first), every directory in order. A file named directly in
// CANOPY_CUDA_LIBS is tried first when its base name starts with one of
// spec's names without version (libcuda.so, libnvrtc.so, ...).
func candidates(spec libSpec, dirs []string, isFile func(string) bool) []string {
	var out []string
	stem := strings.SplitN(spec.names[len(spec.names)-1], ".so", 2)[0] + ".so"
	for _, d := range dirs {
		if d != loaderDefault && isFile(d) && strings.HasPrefix(filepath.Base(d), stem) {
			out = append(out, d)
		}
	}
	for _, name := range spec.names {
		for _, d := range dirs {
			switch {
			case d == loaderDefault:
				out = append(out, name)
			case isFile(d):
				// a file entry: handled above
			default:
				out = append(out, filepath.Join(d, name))
			}
		}
	}
	return out
}

// NotFoundError says that a library could not be loaded, listing every
// path that was tried and why each failed.
type NotFoundError struct {
	Library string   // e.g. "libcuda.so.1"
	What    string   // e.g. "CUDA driver"
	Tried   []string // "path: reason" per attempt, in order
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no %s: %s not found (tried: %s)", e.What, e.Library, strings.Join(e.Tried, "; "))
}

// openLib tries the candidates of spec in order and returns the handle and
// path of the first that the loader accepts.
func openLib(spec libSpec, env searchEnv) (uintptr, string, error) {
	h, path, _, err := openLibWith(spec, env, nil)
	return h, path, err
}

// openLibWith is openLib with a second test: accept (when not nil) looks
// at each library that loads and returns "" to take it or the reason to
// pass it over. When every library that loads is passed over, the first of
// them is returned with skipped listing the reasons; the caller decides
// whether that is good enough.
func openLibWith(spec libSpec, env searchEnv, accept func(h uintptr, path string) string) (h uintptr, path string, skipped []string, err error) {
	dirs := searchDirs(env)
	isFile := func(p string) bool { return p != loaderDefault && env.exists(p) && !isDir(p) }
	var tried []string
	var fallbackH uintptr
	var fallbackPath string
	for _, c := range candidates(spec, dirs, isFile) {
		if filepath.IsAbs(c) && !env.exists(c) {
			tried = append(tried, c+": no such file")
			continue
		}
		h, err := env.open(c)
		if err == nil && h != 0 {
			if accept == nil {
				return h, c, skipped, nil
			}
			why := accept(h, c)
			if why == "" {
				return h, c, skipped, nil
			}
			skipped = append(skipped, c+": "+why)
			if fallbackH == 0 {
				fallbackH, fallbackPath = h, c
			}
			continue
		}
		reason := "dlopen failed"
		if err != nil {
			reason = oneLine(err.Error())
		}
		if !filepath.IsAbs(c) {
			c += " (loader default paths)"
		}
		tried = append(tried, c+": "+reason)
	}
	if fallbackH != 0 {
		return fallbackH, fallbackPath, skipped, nil
	}
	return 0, "", skipped, &NotFoundError{Library: spec.names[0], What: spec.what, Tried: append(tried, skipped...)}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// ErrNoDriver is matched (errors.Is) by load errors caused by a missing
// driver library, as opposed to a driver that loads but fails.
var ErrNoDriver = errors.New("no CUDA driver")

func (e *NotFoundError) Is(target error) bool {
	return target == ErrNoDriver && e.What == specDriver.what
}
