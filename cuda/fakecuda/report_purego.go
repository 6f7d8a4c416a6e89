//go:build darwin || linux

package fakecuda

import (
	"path/filepath"

	"github.com/ebitengine/purego"
)

// reportText calls fakecuda_report in the emulated driver of dir, which
// dlopen finds already loaded when package cuda has loaded it.
func reportText(dir string, reset bool) (string, error) {
	h, err := purego.Dlopen(filepath.Join(dir, "libcuda.so.1"), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return "", err
	}
	var report func() string
	purego.RegisterLibFunc(&report, h, "fakecuda_report")
	s := report()
	if reset {
		var clear func()
		purego.RegisterLibFunc(&clear, h, "fakecuda_reset_report")
		clear()
	}
	return s, nil
}
