// Package sequence implements the board-and-card game Sequence for Canopy:
// the full rules (default) for 2 or 3 players and the study's research
// variant "sequence:jacks=false" (96 cards, no jacks), with hidden hands,
// explicit chance nodes, determinization and the study's encodings.
//
// It is for playing, searching and training on Sequence through the
// games API. It is not for teams of 4 or 6 players (not implemented), nor
// for rendering beyond the text Draw.
//
// # Rules
//
// The board is shared/data/sequence/board.txt (embedded as layout; the tests
// compare the two). Two 52-card decks give two copies of each card; a hand
// holds 7 cards with 2 players, 6 with 3. A turn plays one card and then
// draws one (no draw once the deck is empty; there is no reshuffle):
//   - a non-jack card puts a chip on an empty square showing its face;
//   - a two-eyed jack (JD, JC) puts a chip on any empty square;
//   - a one-eyed jack (JS, JH) removes an opponent chip that is not locked;
//   - a dead card (both its squares occupied) may be exchanged once per
//     turn while the deck is not empty: discard it, draw (chance), then play.
//
// Five chips in a row, column or diagonal (corners count for everyone) make
// a sequence; its chips are locked. A new sequence counts only if it shares
// at most one chip with the player's locked chips (so a second sequence may
// share one chip with the first; sharing two does not count; a run of 9
// makes two). Corners are never locked: two lines through one corner meet
// only there, so this changes no count. Win: 2 sequences with 2 players, 1
// with 3. A player who cannot move must pass (PassAction); a full round of
// passes (nobody can move), or every hand empty, ends the game in a draw.
// Passes make whose turn it is public, so determinization never changes it.
// Returns: winner +1, others -1/(n-1); draw 0.
//
// # Chance
//
// Chance is explicit (Type.Chance = ExplicitStochastic). The deck is a
// multiset of counts with no order: every dealt or drawn card is a chance
// node (CurrentPlayer() == games.ChancePlayer) whose outcomes are the card
// kinds left in the deck (action id = kind 0..51, kind = suit*13+rank, suits
// S H D C, ranks A 2..10 J Q K), weighted by count. The deal is 7 (6)
// rounds, one card at a time round robin from player 0; player 0 moves
// first. Because the deck has no order, the notation has no deck order.
//
// # Actions
//
// 700 ids = 7 hand slots x 100 squares, slot-major: id = slot*100 + square,
// squares row-major from the top-left of board.txt (square 0 = a10, columns
// a..j left to right, rows 10..1 top to bottom). Hands are kept sorted by
// kind; of two equal cards only the first slot's actions are legal. The
// same ids serve the whole game: a jack's slot x square means "place" for a
// two-eyed and "remove the chip there" for a one-eyed jack. The corner ids,
// never placement targets, carry the two special moves: slot x 0 (corner
// a10) exchanges the slot's dead card, and id 9 (slot 0 x corner j10) is
// pass. In the research variant the study's legality rule (slot card
// matches an empty square) holds, plus these two ids when they apply.
// Text: "AS@c4", "10H@dead", "pass", "slot3@e5", "#123"; chance: "AS".
//
// # Tensors (from player p's point of view; never other hands or the deck)
//
// Observation [3+C,10,10], C = 96 card instances (99 planes, the study's
// residual-net input) or 104 with jacks (107 planes):
//   - plane 0: p's chips, plane 1: opponents' chips (corners are 1 in both:
//     they count for everyone), plane 2: empty squares (not corners);
//   - plane 3+i for card instance i (2*faceIndex+copy for the 48 non-jack
//     faces in kind order, then 96+2*j+copy for JS, JH, JD, JC), set when p
//     holds that copy: 1 on every square where it can be played now, 0.5 on
//     its own face squares that are occupied (so dead cards show).
//
// InformationState, flat: the observation, then the static face plane
// ((faceIndex+1)/48, corners 0), p's locked chips, opponents' locked chips
// (100 each), the hand one-hot over C instances (a kind held once sets
// copy 0), 13 rank counts of seen cards (discards + own hand, /8), 52
// discard counts (/2), hand sizes and sequence counts for p, p+1, p+2 (3
// each), deck size, the exchanged flag, the pass count, and the mover
// (3 egocentric entries + chance). State.Features writes the study's flat
// encoding: 3 chip planes, face plane, hand one-hot, rank counts
// (Game.FeatureSize = 509 without jacks). The legality mask is Legal.
//
// # Determinization
//
// State.Resample(p, rng, dst) deals the cards p cannot see (deck + other
// hands) uniformly at random into the other hands, keeping their sizes; the
// rest is the deck. It allocates nothing.
//
// # Playouts
//
// State.PlayRandom is the fast random playout (for MCTS rollouts and
// benchmarks). It draws from the same distribution as games.RandomPlayout
// (every legal action id equally likely, deck cards uniformly) but keeps
// its own working form (hands as kind bit sets, empty face squares per
// kind, the deck as a dense list, chips per line) and uses the random
// stream differently, so one seed gives different games on the two
// paths. The tests replay its actions through Legal and Apply, test its
// move choice for uniformity and compare game statistics with the generic
// path.
//
// # Agents
//
// "sequence-greedy" is the study's Greedy baseline (see Greedy).
//
// States are not safe for concurrent use; Game is immutable.
package sequence
