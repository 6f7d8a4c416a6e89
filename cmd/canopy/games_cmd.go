package main

import (
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/pyapi"
	"github.com/canopy-go/canopy/spec"
	"strings"
	"text/tabwriter"

	"github.com/canopy-go/canopy/agent"
)

func init() {
	register(&command{
		Name:    "games",
		Summary: "list the registered games and their options",
		Usage:   "[--json]",
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			asJSON := new(bool)
			spec.Table{jsonOption(asJSON, "")}.Flags(fs)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				// One catalog for the CLI and the Python API
				// (canopy.games()): pyapi.Games.
				rows, err := pyapi.Games()
				if err != nil {
					return err
				}
				if *asJSON {
					return writeJSON(e.Stdout, rows)
				}
				tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "GAME\tPLAYERS\tACTIONS\tFEATURES\tSUMMARY")
				for _, r := range rows {
					var feats []string
					for _, k := range []string{"simultaneous", "chance", "imperfect", "multi_action"} {
						if r.Features[k] {
							feats = append(feats, k)
						}
					}
					if len(feats) == 0 {
						feats = []string{"-"}
					}
					pl := fmt.Sprint(r.Players[0])
					if r.Players[1] != r.Players[0] {
						pl += "-" + fmt.Sprint(r.Players[1])
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.Name, pl, r.Actions, strings.Join(feats, ","), r.Summary)
					for _, o := range r.Options {
						fmt.Fprintf(tw, "\t\t\t  %s=%s\t%s\n", o.Key, o.Default, o.Help)
					}
				}
				return tw.Flush()
			}
		},
	})
	register(&command{
		Name:    "agents",
		Summary: "list the registered agents and their options",
		Usage:   "[--game G] [--json]",
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game, asJSON := new(string), new(bool)
			spec.Table{gameOption(game, "", "only agents that can play this game"), jsonOption(asJSON, "")}.Flags(fs)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				var gameName string
				if *game != "" {
					g, err := newGame(*game)
					if err != nil {
						return err
					}
					gameName = g.Type().Name
				}
				type row struct {
					Name    string         `json:"name"`
					Summary string         `json:"summary"`
					Games   []string       `json:"games,omitempty"`
					Options []agent.Option `json:"options"`
				}
				var rows []row
				for _, r := range agent.Registered() {
					if gameName != "" && len(r.Games) > 0 && !contains(r.Games, gameName) {
						continue
					}
					rows = append(rows, row{r.Name, r.Summary, r.Games, r.Options})
				}
				if *asJSON {
					return writeJSON(e.Stdout, rows)
				}
				tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "AGENT\tGAMES\tSUMMARY")
				for _, r := range rows {
					gs := "any"
					if len(r.Games) > 0 {
						gs = strings.Join(r.Games, ",")
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, gs, r.Summary)
					for _, o := range r.Options {
						fmt.Fprintf(tw, "\t  %s=%s\t%s\n", o.Key, o.Default, o.Help)
					}
				}
				fmt.Fprintln(tw, "\nAn agent spec is NAME or NAME:key=value,... e.g. mcts:sel=uct,sims=2000")
				return tw.Flush()
			}
		},
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
