// Package readfile reads the input files Canopy loads whole (network
// weights, opening books, self-play shards and manifests, game logs)
// with a bound on what one argument can make it do.
//
// Regular reads only regular files, and refuses before reading one that
// is larger than the caller's limit: a device (/dev/zero, /dev/urandom)
// would otherwise be read until memory runs out, and a named pipe (FIFO)
// with no writer would block for ever. Capped reads any file, pipes
// included (a log piped in through /dev/stdin), without blocking when a
// pipe has no writer, and stops at the limit.
//
// It is not for outputs (see internal/atomicfile) nor for files read as
// streams line by line (the caller bounds those itself).
package readfile
