// Package sushigo implements Sushi Go! (the 2014 rulebook, 2-5 players) in
// two registered views that share one rules core:
//
//   - "sushigo:players=N" (default 4, the study's setting): simultaneous
//     moves. At a choosing node CurrentPlayer is games.SimultaneousPlayer;
//     each player's options come from LegalFor and the picks are applied
//     together with ApplyJoint.
//   - "sushigo-seq:players=N": the same game with players choosing one at a
//     time (CurrentPlayer 0, 1, ...), so ordinary sequential search can run
//     on it. Choices made earlier in the same trick are kept as pending and
//     are invisible to the other players' observations until everyone has
//     chosen and the trick is revealed.
//
// Rules (RULES.md): 108-card deck, hands of 10/9/8/7 for 2/3/4/5 players, 3
// rounds. After each trick player i's hand goes to player i-1. Chopsticks
// on a player's table let it take two cards on a later trick; the
// chopsticks then go into the hand being passed. Each wasabi triples the
// next nigiri placed after it. Maki: most icons 6 split among ties
// (remainder ignored) and then no second place; a single leader leaves 3
// for the second most, split likewise; no icons, no points. Puddings at
// the end: most +6, fewest -6 (split, remainder ignored, so -6/4 = -1),
// nobody loses with 2 players, nothing if all are equal.
//
// Chance: ExplicitStochastic. Each round's deal is a run of chance nodes,
// one per card (card d of the round to player d mod N), whose outcomes are
// the card types with probability proportional to their count in the deck;
// action ids 0..11 there read "deal:tempura" and so on.
//
// Actions (NumActions = 93, see cards.go): 0..11 pick one card of a type;
// 12..89 "chop:a+b" takes two cards with chopsticks, placed in that order
// (a <= b in card order, and wasabi precedes the nigiri, so
// "chop:wasabi+salmon" triples the salmon); 90..92 "chop:salmon+wasabi" and
// friends place the nigiri first (offered only without an open wasabi,
// where the order matters). Aliases nigiri1/nigiri2/nigiri3 name
// egg/salmon/squid.
//
// Returns are rank-based and zero-sum: +1 for every opponent a player beats
// and -1 for every opponent that beats it, divided by N-1 (more points
// wins; equal points, more puddings; still equal, a tie that counts 0).
// A single winner gets +1, a single last -1. games.Scorer gives the raw points
// of completed rounds (pudding points added once the game is over).
//
// Information: a player sees its own hand, every table and pudding count,
// the scores, and every hand it has held this round: with hands moving
// from i to i-1, after t tricks it knows the hands now held by p, p-1, ...,
// p-t (all picks are revealed, so it can follow them exactly). Observation
// and information-state tensors contain exactly that (tensor.go); the
// undealt deck, the other hands and other players' pending choices in the
// sequential view never appear. Resample redeals the unknown hands
// uniformly from the viewer's unseen pool (those hands plus the deck) and,
// in the sequential view, replaces other players' pending choices with
// uniformly random legal ones.
//
// The notation (notation.go) is the full state, hidden cards included; it
// round-trips every reachable state. Draw(viewer) renders what a viewer
// may see.
//
// Agents "sushigo-greedy" and "sushigo-heuristic" register for both views;
// State.HeuristicValue (games.Heuristic) exposes the latter's action score
// to search, for progressive bias and heuristic rollouts.
// State.RandomPlayout is a specialised random playout for rollouts (same
// distribution as games.RandomPlayout; it and Resample draw one value from
// the caller's PCG to seed a faster wyrand stream, so both stay
// reproducible from the rng). Both work on packed counts (nibble.go: a
// multiset as twelve 4-bit fields of a uint64), keep the undealt cards
// expanded for swap-remove draws, and read several exactly uniform bounded
// integers from one random word (fastRand.batch: one word per trick for
// all players' picks, one per 8 cards dealt).
//
// Not for: variants (Sushi Go Party!), rendering beyond text, or any
// search; those live elsewhere. Games are immutable and safe for
// concurrent use; States are not.
package sushigo
