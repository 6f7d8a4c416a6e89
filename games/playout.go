package games

import "math/rand/v2"

// RandomPlayout plays uniformly random legal actions from s (modified in
// place) until the game ends, resolving chance nodes by sampling and
// simultaneous nodes by independent uniform choices. mask must be
// NewMask(NumActions()); joint must have NumPlayers() entries when the game
// is simultaneous (it may be nil otherwise). It returns the number of
// actions applied and never allocates.
func RandomPlayout(s State, rng *rand.Rand, mask Mask, joint []Action) int {
	n := 0
	for !s.IsTerminal() {
		switch p := s.CurrentPlayer(); p {
		case ChancePlayer:
			s.Apply(s.(ChanceState).SampleChance(rng))
		case SimultaneousPlayer:
			ss := s.(SimultaneousState)
			for i := range joint {
				ss.LegalFor(i, mask)
				joint[i] = mask.Random(rng)
			}
			ss.ApplyJoint(joint)
		default:
			s.Legal(mask)
			s.Apply(mask.Random(rng))
		}
		n++
	}
	return n
}
