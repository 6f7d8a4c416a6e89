package cuda

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func fakeEnv(vars map[string]string, files map[string]bool, globs []string, openable map[string]bool) (searchEnv, *[]string) {
	var opened []string
	return searchEnv{
		getenv: func(k string) string { return vars[k] },
		glob:   func(string) ([]string, error) { return append([]string(nil), globs...), nil },
		exists: func(p string) bool { return files[p] },
		open: func(p string) (uintptr, error) {
			opened = append(opened, p)
			if openable[p] {
				return 1, nil
			}
			return 0, errors.New(p + ": cannot open shared object file")
		},
	}, &opened
}

func TestSearchDirsOrder(t *testing.T) {
	env, _ := fakeEnv(map[string]string{
		"CANOPY_CUDA_LIBS": "/opt/a:/opt/b,/opt/a",
		"CUDA_HOME":        "/cuda/home",
		"CUDA_PATH":        "/cuda/path",
	}, nil, []string{"/usr/local/cuda-12.9/lib64", "/usr/local/cuda-12.10/lib64", "/usr/local/cuda-11.8/lib64", "/usr/local/cuda-13.0/lib64"}, nil)
	got := searchDirs(env)
	want := []string{
		"/opt/a", "/opt/b", loaderDefault,
		"/cuda/home/lib64", "/cuda/home/lib", "/cuda/home/targets/x86_64-linux/lib",
		"/cuda/path/lib64", "/cuda/path/lib", "/cuda/path/targets/x86_64-linux/lib",
		"/usr/local/cuda/lib64",
		"/usr/local/cuda-13.0/lib64", "/usr/local/cuda-12.10/lib64", "/usr/local/cuda-12.9/lib64", "/usr/local/cuda-11.8/lib64",
		"/usr/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("searchDirs:\n got %q\nwant %q", got, want)
	}
}

func TestCandidatesNewestVersionFirst(t *testing.T) {
	dirs := []string{"/x/libnvrtc.so.12.4", "/d1", loaderDefault}
	isFile := func(p string) bool { return p == "/x/libnvrtc.so.12.4" }
	got := candidates(specNVRTC, dirs, isFile)
	want := []string{"/x/libnvrtc.so.12.4",
		"/d1/libnvrtc.so.13", "libnvrtc.so.13",
		"/d1/libnvrtc.so.12", "libnvrtc.so.12",
		"/d1/libnvrtc.so", "libnvrtc.so"}
	if !slices.Equal(got, want) {
		t.Fatalf("candidates:\n got %q\nwant %q", got, want)
	}
	// A file entry for another library is not tried for the driver.
	for _, c := range candidates(specDriver, dirs, isFile) {
		if strings.Contains(c, "nvrtc") {
			t.Fatalf("driver candidate %q is the NVRTC file", c)
		}
	}
}

func TestOpenLibReportsEveryPathTried(t *testing.T) {
	env, opened := fakeEnv(nil, map[string]bool{"/usr/lib/x86_64-linux-gnu/libcuda.so": true}, nil, nil)
	_, _, err := openLib(specDriver, env)
	if err == nil {
		t.Fatal("openLib found a driver in an empty fake machine")
	}
	if !errors.Is(err, ErrNoDriver) {
		t.Errorf("error %v does not match ErrNoDriver", err)
	}
	msg := err.Error()
	for _, s := range []string{
		"no CUDA driver: libcuda.so.1 not found (tried: ",
		"libcuda.so.1 (loader default paths): libcuda.so.1: cannot open shared object file",
		"/usr/local/cuda/lib64/libcuda.so.1: no such file",
		"/usr/local/nvidia/lib64/libcuda.so.1: no such file",
		"/usr/lib/x86_64-linux-gnu/libcuda.so: /usr/lib/x86_64-linux-gnu/libcuda.so: cannot open",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("error lacks %q:\n%s", s, msg)
		}
	}
	// Absolute paths that do not exist are not handed to dlopen.
	if want := []string{"libcuda.so.1", "libcuda.so", "/usr/lib/x86_64-linux-gnu/libcuda.so"}; !slices.Equal(*opened, want) {
		t.Errorf("dlopen calls %q, want %q", *opened, want)
	}
	if n := strings.Count(msg, "; ") + 1; n != 8 { // 4 places x 2 names
		t.Errorf("%d attempts listed, want 8:\n%s", n, msg)
	}
}

func TestOpenLibPicksFirstThatOpens(t *testing.T) {
	files := map[string]bool{"/usr/local/cuda/lib64/libcublas.so.12": true, "/usr/local/cuda-13.0/lib64/libcublas.so.13": true}
	env, _ := fakeEnv(nil, files, []string{"/usr/local/cuda-13.0/lib64"}, files)
	_, path, err := openLib(specCublas, env)
	if err != nil || path != "/usr/local/cuda-13.0/lib64/libcublas.so.13" {
		t.Fatalf("openLib = %q, %v; want the .so.13 (newest version wins over earlier directory)", path, err)
	}
}

// TestLoadOnThisMachine checks the real search: on a machine without a
// driver the error names the library and lists what was tried.
func TestLoadOnThisMachine(t *testing.T) {
	l, err := Load()
	if err == nil {
		t.Logf("driver found: %s (version %d); NVRTC %s %v (%v); cuBLAS %s %d (%v)", l.DriverPath, l.DriverVersion,
			l.NVRTCPath, l.NVRTCVersion, l.NVRTCErr, l.CublasPath, l.CublasVersion, l.CublasErr)
		return
	}
	if errors.Is(err, ErrNoDriver) {
		msg := err.Error()
		if !strings.Contains(msg, "libcuda.so.1 not found (tried: ") || !strings.Contains(msg, "/usr/local/cuda/lib64/libcuda.so.1") {
			t.Errorf("unhelpful error: %s", msg)
		}
		t.Logf("as expected without a GPU: %v", err)
		return
	}
	t.Logf("driver present but unusable: %v", err)
}
