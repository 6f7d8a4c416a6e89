package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/cuda"
	"github.com/canopy-go/canopy/kernels/cudasrc"
)

// ptxasSpill matches ptxas -v's spill line, e.g. "0 bytes spill stores, 0 bytes spill loads".
var ptxasSpill = regexp.MustCompile(`(\d+) bytes spill stores, (\d+) bytes spill loads`)

// compileCheck compiles every embedded kernel file (and the self-test
// kernel) with NVRTC alone for each architecture in archList, as CUBIN,
// and fails on any compile error. When ptxas is on PATH it also compiles
// the PTX for each architecture with ptxas -v, prints its per-kernel
// register and spill lines, and fails on spills.
func compileCheck(w io.Writer, archList string) error {
	archs, err := parseList(archList)
	if err != nil {
		return err
	}
	l, err := cuda.LoadNVRTC()
	if err != nil {
		return fmt.Errorf("%w\nNVRTC is needed: see README, GPU section (make cuda-compile-check)", err)
	}
	fmt.Fprintf(w, "NVRTC %d.%d: %s\n", l.NVRTCVersion[0], l.NVRTCVersion[1], l.NVRTCChoice)
	ptxas, _ := exec.LookPath("ptxas")
	if ptxas == "" {
		fmt.Fprintln(w, "ptxas not on PATH: registers and spills not checked")
	}
	type file struct{ name, src string }
	var files []file
	for _, n := range cudasrc.Names() {
		src, err := cudasrc.Source(n)
		if err != nil {
			return err
		}
		files = append(files, file{n, src})
	}
	files = append(files, file{"saxpy.cu", cuda.SelfTestKernels})
	var errs []error
	for _, f := range files {
		for _, a := range archs {
			img, log, err := l.Compile(f.name, f.src, cuda.Target{Arch: a, Cubin: true})
			if err != nil {
				errs = append(errs, err)
				fmt.Fprintf(w, "FAIL %s sm_%d: %v\n", f.name, a, err)
				continue
			}
			fmt.Fprintf(w, "ok   %s sm_%d: %d bytes of CUBIN%s\n", f.name, a, len(img), logSuffix(log))
			if ptxas != "" {
				if err := ptxasCheck(w, l, ptxas, f.name, f.src, a); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

func logSuffix(log string) string {
	if log = strings.TrimSpace(log); log == "" {
		return ", empty log"
	}
	return ", log:\n" + log
}

// ptxasCheck assembles the PTX of src for arch with ptxas -v and reports
// registers and spills per kernel; spills are an error.
func ptxasCheck(w io.Writer, l *cuda.Libs, ptxas, name, src string, arch int) error {
	ptx, _, err := l.Compile(name, src, cuda.Target{Arch: arch})
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "canopy-ptxas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "k.ptx")
	if err := os.WriteFile(in, []byte(strings.TrimRight(string(ptx), "\x00")), 0o644); err != nil {
		return err
	}
	out, err := exec.Command(ptxas, "-arch=sm_"+strconv.Itoa(arch), "-v", in, "-o", filepath.Join(dir, "k.cubin")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ptxas %s sm_%d: %v\n%s", name, arch, err, out)
	}
	var spills []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "Compiling entry function") || strings.Contains(line, "Used ") || strings.Contains(line, "spill") {
			fmt.Fprintf(w, "     %s\n", strings.TrimSpace(line))
		}
		if m := ptxasSpill.FindStringSubmatch(line); m != nil && (m[1] != "0" || m[2] != "0") {
			spills = append(spills, strings.TrimSpace(line))
		}
	}
	if len(spills) > 0 {
		return fmt.Errorf("%s sm_%d: register spills: %s", name, arch, strings.Join(spills, "; "))
	}
	return nil
}
