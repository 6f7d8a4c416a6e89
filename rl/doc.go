// Package rl is policy-gradient reinforcement learning over the game API:
// vectorised environments that a learner steps in lock-step, and Proximal
// Policy Optimization (PPO, Schulman et al. 2017, arXiv:1707.06347) with
// action masking, Generalized Advantage Estimation (GAE, Schulman et al.
// 2016, arXiv:1506.02438) and the zero-sum GAE of study 002.
//
// It is for model-free agents that play without search (study 002's
// Connect Four PPO, the policy-gradient parts of studies 000 and 001). It
// is not the AlphaZero loop: search-based training lives in selfplay,
// train and zero.
//
// # Environments
//
// A VecEnv holds N games of one games.Game. The learner always acts from
// its own seat and sees the board from its own side (the egocentric MDP of
// study 002, section 3.2: State.Observation(learner, ...)); every other
// seat is played by an Opponent inside the environment, and chance nodes
// are sampled there too, so each Step is one learner decision per game.
// Finished games are recorded in EpisodeStats and reset at once (as Gym's
// vector environments do); the step that ended a game reports Done and
// its terminal reward. Observations of all N games lie in one batch
// buffer (N x ObservationSize, planar as nets.Net.Forward reads them) and
// the legal actions in N masks. Stepping allocates nothing; each game has
// its own random stream, so results do not depend on the worker count.
//
// # PPO
//
// Rollout holds T steps of N environments (time-major, index t*N+e).
// GAE and ZeroSumGAE turn rewards and values into advantages and value
// targets; Loss evaluates the clipped PPO objective with masked softmax,
// (optionally clipped) value loss and entropy bonus and writes its
// gradient with respect to the network's outputs (policy logits and
// value), which nets.Net.Backward propagates to the weights. PPO ties it
// together: it collects rollouts with a nets.Net, and trains it for
// several epochs of shuffled minibatches with advantage normalisation,
// global-norm gradient clipping and Adam.
//
// Nothing in this package is safe for concurrent use unless its doc says
// so.
package rl
