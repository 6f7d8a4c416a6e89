package web

import (
	"time"

	"github.com/canopy-go/canopy/spec"
)

// Table declares the fields of c that a command line sets (canopy
// serve's flags), bound to c, with their defaults (DefaultConfig), ranges
// and help: the one declaration the flags, their help and their checks
// come from. Table.Reset stores the defaults. MaxTime follows
// MoveTimeout in canopy serve; the other fields keep DefaultConfig's
// values (withDefaults).
func (c *Config) Table() spec.Table {
	d := DefaultConfig()
	runs := spec.Strings("run", &c.Runs, "run directory to show (metrics.jsonl, plots/*.svg); repeatable")
	runs.File = true
	return spec.Table{
		runs,
		spec.File("logs", &c.Logs, "", "directory of JSON game logs to offer for replay"),
		spec.Int("max-games", &c.MaxGames, d.MaxGames, 1, 1000, "games held at once"),
		spec.Int("max-games-per-client", &c.MaxClientGames, 0, 0, 1000, "games one client (IP address) holds at once, up to --max-games; 0: half of --max-games"),
		spec.DurationIn("idle", &c.IdleTimeout, d.IdleTimeout, time.Minute, 365*24*time.Hour, "delete games idle this long (their agents closed)"),
		spec.DurationIn("move-timeout", &c.MoveTimeout, d.MoveTimeout, 100*time.Millisecond, time.Hour, "deadline of one agent move or analysis (and the cap of time= in agent specs)"),
		spec.Int("max-sims", &c.MaxSims, d.MaxSims, 1, 1<<30, "largest sims= an agent spec may ask for"),
		spec.Int("max-streams", &c.MaxStreams, d.MaxStreams, 1, 1000, "live streams (analyses, run watches) open at once"),
	}
}
