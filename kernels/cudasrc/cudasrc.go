package cudasrc

import (
	"embed"
	"sort"
)

//go:embed *.cu
var files embed.FS

// Source returns the text of the named .cu file.
func Source(name string) (string, error) {
	b, err := files.ReadFile(name)
	return string(b), err
}

// Names lists the embedded .cu files, sorted.
func Names() []string {
	ents, _ := files.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// Net is the file with the network kernels.
const Net = "net.cu"
