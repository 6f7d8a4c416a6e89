//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package runlock

import "os"

// tryLock is a stand-in where flock(2) is unavailable: the lock is always
// granted, so run directories are not protected against two writers.
func tryLock(*os.File) (busy bool, err error) { return false, nil }
