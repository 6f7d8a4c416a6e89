// Package rundir is the one home of what every command that writes a run
// directory (zero, selfplay, train, ppo, arena --logs) does the same way:
// hold the directory (one process at a time), write its files atomically,
// and keep a resumed run to the settings it started with.
//
// Open takes the directory's lock (internal/runlock: an flock that the
// operating system drops when the holder dies, kill -9 included, so the
// next run takes a crashed run's directory over without a stale lock) and,
// holding it, removes the temporary files that writes cut short by a crash
// left behind (internal/atomicfile). WriteJSON and ReadJSON are the
// settings file's format: indented JSON with a final newline, replaced
// atomically.
//
// Compare is "a resumed run keeps its settings": it compares the stored
// settings with the requested ones field by field, through their JSON
// form, and names each difference by the flag that sets it, as
//
//	these settings differ from the run's: --sims 16 (run: 32), --lr 0.01 (run: 0.02)
//
// It is not where a run's own layout lives (which files, which names):
// each package keeps its files and formats (zero.json, ppo.json,
// manifest.json, game-NNNNNN.json); rundir only holds, writes and
// compares. It parses no flags: the caller says which setting is which
// flag (Flags).
package rundir
