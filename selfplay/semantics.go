package selfplay

// Semantics numbers what Run plays. Two builds with the same Semantics
// play the same game, bit for bit, for the same network, backend,
// settings, seed and game id; a distributed run (package fleet) refuses
// games of a Semantics other than its own. Increase it with every change
// that makes Run, the search it drives or the records it writes differ
// for the same inputs.
//
// 2: simultaneous moves searched seat by seat with network priors
// (sushigo), resignation with three or more players, root_values
// recorded, and per-player values carried in fleet game messages.
const Semantics = 2
