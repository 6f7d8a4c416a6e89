package onnx

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// python is Debian's interpreter, the one with python3-onnx and
// python3-numpy (a python3 on PATH may be another one without them).
const python = "/usr/bin/python3"

// needPython skips the test, saying why, when python3 with numpy and onnx
// is not installed (`make pyonnx` installs them). Under CI it fails
// instead: the outside checks must not be skipped there.
func needPython(t *testing.T) {
	t.Helper()
	out, err := exec.Command(python, "-c", "import numpy, onnx").CombinedOutput()
	if err == nil {
		return
	}
	msg := "outside ONNX check needs " + python + " with python3-onnx and python3-numpy (make pyonnx; apt-get install python3-onnx python3-numpy): " +
		string(bytes.TrimSpace(lastLine(out)))
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set: reference checks must not be skipped)")
	}
	t.Skip(msg)
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}
