package rl

import "fmt"

// GAE computes Generalized Advantage Estimation (Schulman, Moritz, Levine,
// Jordan, Abbeel 2016, "High-Dimensional Continuous Control Using
// Generalized Advantage Estimation", eq. 16) over T steps of N
// environments stored time-major (index t*N+e):
//
//	delta_t = r_t + gamma * (1 - done_t) * V(s_{t+1}) - V(s_t)
//	A_t     = delta_t + gamma * lambda * (1 - done_t) * A_{t+1}
//	R_t     = A_t + V(s_t)   (the value target, the lambda-return)
//
// done_t says that step t ended its episode, so s_{t+1} is the next
// game's first state and nothing is bootstrapped across it. V(s_T) of the
// state after the last step is lastValues[e]. adv and ret receive A and R;
// they may not alias the inputs.
func GAE(T, N int, rewards, values []float32, dones []bool, lastValues []float32, gamma, lambda float64, adv, ret []float32) error {
	return gae(T, N, rewards, values, dones, lastValues, gamma, lambda, 1, adv, ret)
}

// ZeroSumGAE is study 002's zero-sum GAE (section 4.2) for trajectories
// whose consecutive steps alternate between the two players of a zero-sum
// game (pure self-play with both seats in one trajectory, every value from
// the mover's side):
//
//	delta_t = r_t + gamma * (1 - done_t) * (-V(s_{t+1})) - V(s_t)
//	A_t     = delta_t - gamma * lambda * (1 - done_t) * A_{t+1}
//	R_t     = A_t + V(s_t)
//
// The study gives delta_t only; the recursion follows from the mover's
// return G_t = r_t - gamma * G_{t+1} (the next mover is the opponent), so
// that lambda = 1 gives A_t = G_t - V(s_t) exactly as in GAE. lastValues
// are from the side of the player to move after the last step. Use GAE,
// not this, for VecEnv rollouts, whose steps are all the learner's.
func ZeroSumGAE(T, N int, rewards, values []float32, dones []bool, lastValues []float32, gamma, lambda float64, adv, ret []float32) error {
	return gae(T, N, rewards, values, dones, lastValues, gamma, lambda, -1, adv, ret)
}

func gae(T, N int, rewards, values []float32, dones []bool, lastValues []float32, gamma, lambda, sign float64, adv, ret []float32) error {
	n := T * N
	switch {
	case T < 1 || N < 1:
		return fmt.Errorf("rl: GAE over %d steps of %d environments", T, N)
	case len(rewards) < n || len(values) < n || len(dones) < n || len(adv) < n || len(ret) < n || len(lastValues) < N:
		return fmt.Errorf("rl: GAE(T=%d, N=%d): rewards %d, values %d, dones %d, adv %d, ret %d (want %d each), lastValues %d (want %d)",
			T, N, len(rewards), len(values), len(dones), len(adv), len(ret), n, len(lastValues), N)
	case !(gamma >= 0 && gamma <= 1) || !(lambda >= 0 && lambda <= 1):
		return fmt.Errorf("rl: GAE gamma = %g, lambda = %g, want both in [0, 1]", gamma, lambda)
	}
	for e := range N {
		var next float64 // A_{t+1}
		nextV := float64(lastValues[e])
		for t := T - 1; t >= 0; t-- {
			i := t*N + e
			cont := 1.0
			if dones[i] {
				cont = 0
			}
			v := float64(values[i])
			delta := float64(rewards[i]) + sign*gamma*cont*nextV - v
			next = delta + sign*gamma*lambda*cont*next
			adv[i] = float32(next)
			ret[i] = float32(next + v)
			nextV = v
		}
	}
	return nil
}
