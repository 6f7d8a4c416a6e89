package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/spec"
	"io"
	"strings"
	"sync"

	"github.com/canopy-go/canopy/nets"
	// The canopy command can evaluate networks on an NVIDIA GPU when one is
	// usable: the cuda backend registers with a higher priority than cpu and
	// `--backend auto` falls back to cpu (with the reason) when no driver,
	// NVRTC or cuBLAS library is found. No cgo is involved; the libraries
	// are loaded at run time.
	_ "github.com/canopy-go/canopy/nets/cudabackend"
	// The ort backend runs ONNX models in ONNX Runtime, also loaded at run
	// time (never chosen by auto); --probe says which library it finds.
	"github.com/canopy-go/canopy/nets/ortbackend"
	"github.com/canopy-go/canopy/search/engine"
)

func init() {
	register(&command{
		Name:    "backends",
		Summary: "list the network backends and the options of their --backend specs",
		Usage:   "[--probe] [--json]",
		Help: `Lists the registered network backends, highest priority first, with the
options their specs take (--backend NAME:key=value,...). --probe opens
"auto" on a tiny network and prints the one line saying which backend it
chose here and why (on a GPU machine this compiles the CUDA kernels), and
the ONNX Runtime library the ort backend finds (path, version, execution
providers) or why there is none.

` + backendsHelp(),
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			probe, asJSON := new(bool), new(bool)
			spec.Table{
				spec.Bool("probe", probe, false, `open "auto" here and say what it chose`),
				jsonOption(asJSON, ""),
			}.Flags(fs)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				var choice, ort string
				if *probe {
					c, err := probeAuto()
					if err != nil {
						return err
					}
					choice, ort = c.String(), probeORT()
				}
				if *asJSON {
					type opt struct {
						Key     string `json:"key"`
						Allowed string `json:"allowed"`
						Default string `json:"default"`
						Help    string `json:"help"`
					}
					type row struct {
						Name     string `json:"name"`
						Priority int    `json:"priority"`
						Summary  string `json:"summary"`
						Options  []opt  `json:"options"`
					}
					out := struct {
						Backends []row  `json:"backends"`
						Auto     string `json:"auto,omitempty"`
						ORT      string `json:"ort,omitempty"`
					}{Auto: choice, ORT: ort}
					for _, b := range nets.BackendInfos() {
						r := row{Name: b.Name, Priority: b.Priority, Summary: b.Summary, Options: []opt{}}
						for _, o := range b.Options {
							r.Options = append(r.Options, opt{o.Key, o.Allowed(), o.Default, o.Help})
						}
						out.Backends = append(out.Backends, r)
					}
					return writeJSON(e.Stdout, out)
				}
				io.WriteString(e.Stdout, backendsHelp())
				if choice != "" {
					fmt.Fprintf(e.Stdout, "auto here: %s\n", choice)
					fmt.Fprintf(e.Stdout, "ort here: %s\n", ort)
				}
				return nil
			}
		},
	})
}

// backendsHelp lists the backend specs for help texts: one line per
// backend, then one per option.
func backendsHelp() string {
	var b strings.Builder
	b.WriteString("Backend specs (--backend NAME or NAME:key=value,...):\n")
	fmt.Fprintf(&b, "  %-8s %s\n", "auto", "the highest-priority backend that opens here (the default)")
	for _, info := range nets.BackendInfos() {
		fmt.Fprintf(&b, "  %-8s %s\n", info.Name, info.Summary)
		for _, o := range info.Options {
			line := fmt.Sprintf("%s=%s", o.Key, o.Allowed())
			fmt.Fprintf(&b, "      %-28s %s (default %s)\n", line, o.Help, o.Default)
		}
	}
	return b.String()
}

// probeAuto opens "auto" on a tiny network and returns the choice.
func probeAuto() (nets.Choice, error) {
	net, err := nets.New(nets.Config{InputPlanes: 1, Height: 2, Width: 2, PolicySize: 4, Channels: 4, Blocks: 1, ValueHidden: 4}, 1)
	if err != nil {
		return nets.Choice{}, err
	}
	be, c, err := nets.OpenBackendSpec("auto", net, nets.BackendOptions{MaxBatch: 1})
	if err != nil {
		return c, err
	}
	if cl, ok := be.(io.Closer); ok {
		cl.Close()
	}
	return c, nil
}

// probeORT says in one line which ONNX Runtime library the ort backend
// loads here (path, version, execution providers), or why none.
func probeORT() string {
	l, err := ortbackend.Load()
	if err != nil {
		return "unavailable: " + err.Error()
	}
	return fmt.Sprintf("ONNX Runtime %s at %s; execution providers %s (cuda and tensorrt also need their provider libraries, CUDA and a GPU)",
		l.Version, l.Path, strings.Join(l.Providers, ", "))
}

// backendError turns an error of nets.OpenBackendSpec for the --backend
// flag into the CLI's error: a spec that names no backend or has a bad
// option is a usage error (status 2); a backend that cannot run here or
// fails to open is a failure (status 1).
func backendError(spec string, err error) error {
	if errors.Is(err, nets.ErrUnknownBackend) || errors.Is(err, nets.ErrBadBackendOption) {
		return usageError{"--backend: " + err.Error() + " (see `canopy backends`)"}
	}
	return fmt.Errorf("--backend %s: %v", spec, err)
}

// agentEnv checks spec and returns the environment the command's agents
// are built with: one engine pool whose backend for agents that say
// backend=auto is spec, announcing on w (when not nil) each network the
// agents open, once per network and backend.
func agentEnv(spec string, w io.Writer) (agent.Env, error) {
	if _, err := nets.ParseBackendSpec(spec); err != nil {
		return agent.Env{}, backendError(spec, err)
	}
	var mu sync.Mutex // OnOpen runs under the pool's lock; this guards seen on its own
	seen := map[string]bool{}
	pool := engine.NewPool(engine.PoolOptions{Backend: spec, OnOpen: func(net nets.Source, backend, choice string) {
		mu.Lock()
		defer mu.Unlock()
		if w != nil && !seen[net.SHA256+backend] {
			seen[net.SHA256+backend] = true
			fmt.Fprintf(w, "network %s: %s\n", net.Desc, choice)
		}
	}})
	return agent.Env{Log: w}.With(pool), nil
}
