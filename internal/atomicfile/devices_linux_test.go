package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Devices are written through, never replaced; /dev/full's error comes
// back. As root (who could replace /dev/null if WriteFile regressed) the
// test writes to private twins of /dev/null and /dev/full made with
// mknod, never to the real ones.
func TestWriteFileDevices(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		path         string
		major, minor uint32
		fail         bool
	}{{"/dev/null", 1, 3, false}, {"/dev/full", 1, 7, true}} {
		p := tc.path
		if os.Geteuid() == 0 {
			p = filepath.Join(dir, filepath.Base(tc.path))
			dev := int(tc.major<<8 | tc.minor) // Linux's old encoding, fine for small numbers
			if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, dev); err != nil {
				t.Logf("%s: cannot make a device node (%v); skipped", p, err)
				continue
			}
			if f, err := os.OpenFile(p, os.O_WRONLY, 0); err != nil {
				t.Logf("%s: devices unusable here (%v); skipped", p, err)
				continue
			} else {
				f.Close()
			}
		}
		fi, err := os.Stat(p)
		if err != nil || fi.Mode()&os.ModeDevice == 0 {
			t.Logf("%s: not a device here; skipped", p)
			continue
		}
		err = WriteFile(p, []byte("data"))
		if (err != nil) != tc.fail {
			t.Errorf("%s: error %v, want failure %v", p, err, tc.fail)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeDevice == 0 {
			t.Fatalf("%s was replaced: %v %v", p, fi.Mode(), err)
		}
		ents, _ := os.ReadDir(filepath.Dir(p))
		for _, e := range ents {
			if IsTemp(e.Name()) {
				t.Errorf("temporary file %s left in %s", e.Name(), filepath.Dir(p))
			}
		}
	}
}
