//go:build !(darwin || linux)

package fakecuda

import (
	"errors"
	"runtime"
)

func reportText(string, bool) (string, error) {
	return "", errors.New("fakecuda: not supported on " + runtime.GOOS)
}
