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
				return uintptr(len(opened)), nil // distinct per call
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
		"/d1/libnvrtc.so.11.2", "libnvrtc.so.11.2",
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

// TestOpenNVRTCPrefersDriverMajor pins issue 17's items 2 and 5: an NVRTC
// newer than the driver is passed over for one the driver supports, the
// choice says so, and libnvrtc-builtins is loaded from the chosen
// library's folder right after it.
func TestOpenNVRTCPrefersDriverMajor(t *testing.T) {
	const dir = "/opt/cu"
	all := map[string]bool{dir + "/libnvrtc.so.13": true, dir + "/libnvrtc.so.12": true,
		dir + "/libnvrtc-builtins.so.12.4": true, dir + "/libnvrtc-builtins.so.13.0": true}
	versions := map[string][2]int{dir + "/libnvrtc.so.13": {13, 0}, dir + "/libnvrtc.so.12": {12, 4}}
	for _, c := range []struct {
		name     string
		driver   int
		drop     string // a file missing from the folder
		want     string
		choice   []string
		builtins string // opened last, after the chosen NVRTC, or ""
	}{
		{"driver 12.4 skips NVRTC 13", 12040, "", dir + "/libnvrtc.so.12",
			[]string{dir + "/libnvrtc.so.12 (NVRTC 12.4) for driver CUDA 12.4",
				"passed over " + dir + "/libnvrtc.so.13: NVRTC 13.0 is newer than the driver (CUDA 12.4)",
				"builtins " + dir + "/libnvrtc-builtins.so.12.4"}, dir + "/libnvrtc-builtins.so.12.4"},
		{"driver 13.0 takes the newest", 13000, "", dir + "/libnvrtc.so.13",
			[]string{"(NVRTC 13.0) for driver CUDA 13.0", "builtins " + dir + "/libnvrtc-builtins.so.13.0"}, dir + "/libnvrtc-builtins.so.13.0"},
		{"only a newer NVRTC", 12040, dir + "/libnvrtc.so.12", dir + "/libnvrtc.so.13",
			[]string{"no NVRTC the driver supports was found, its output may not load"}, dir + "/libnvrtc-builtins.so.13.0"},
		{"builtins missing", 12040, dir + "/libnvrtc-builtins.so.12.4", dir + "/libnvrtc.so.12",
			[]string{"builtins: libnvrtc-builtins.so.12.4 not found beside NVRTC"}, ""},
	} {
		files := map[string]bool{}
		for f := range all {
			if f != c.drop {
				files[f] = true
			}
		}
		env, opened := fakeEnv(map[string]string{"CANOPY_CUDA_LIBS": dir}, files, nil, files)
		paths := map[uintptr]string{}
		open := env.open
		env.open = func(p string) (uintptr, error) {
			h, err := open(p)
			paths[h] = p
			return h, err
		}
		version := func(h uintptr, p string) ([2]int, error) {
			if paths[h] != p {
				t.Fatalf("%s: handle %d is %s, not %s", c.name, h, paths[h], p)
			}
			return versions[p], nil
		}
		_, path, _, choice, err := openNVRTC(env, c.driver, version)
		if err != nil || path != c.want {
			t.Errorf("%s: chose %q, %v; want %s", c.name, path, err, c.want)
			continue
		}
		for _, s := range c.choice {
			if !strings.Contains(choice, s) {
				t.Errorf("%s: choice %q lacks %q", c.name, choice, s)
			}
		}
		if c.builtins != "" {
			i, n := slices.Index(*opened, path), len(*opened)
			if i < 0 || i >= n-1 || (*opened)[n-1] != c.builtins {
				t.Errorf("%s: dlopen order %q: want %s last, after %s", c.name, *opened, c.builtins, path)
			}
		}
	}
	// NVRTC found by the loader's own search needs no builtins from a folder.
	if p, err := loadBuiltins(searchEnv{}, "libnvrtc.so.12", [2]int{12, 4}); p != "" || err != nil {
		t.Errorf("loader-default NVRTC: %q, %v", p, err)
	}
}
