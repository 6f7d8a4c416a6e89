package games

import "math/rand/v2"

// RandomStep applies one uniformly random step to the non-terminal state s:
// a sampled outcome at a chance node, independent uniform choices (joint,
// one entry per player) at a simultaneous node, otherwise a uniform legal
// action of the player to move. mask must be NewMask(NumActions()); joint
// may be nil for games without simultaneous nodes. It never allocates.
func RandomStep(s State, rng *rand.Rand, mask Mask, joint []Action) {
	switch s.CurrentPlayer() {
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
}

// RandomPlayout plays RandomStep from s (modified in place) until the game
// ends and returns the number of steps taken. It never allocates.
func RandomPlayout(s State, rng *rand.Rand, mask Mask, joint []Action) int {
	n := 0
	for !s.IsTerminal() {
		RandomStep(s, rng, mask, joint)
		n++
	}
	return n
}
