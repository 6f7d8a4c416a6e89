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
// # Opponents
//
// An Opponents value picks the opponent of every new game, from the
// environment's own stream, and the environment counts games per
// opponent kind (StatsByKind). Fixed is one opponent (any agent through
// AgentOpponent). A League mixes the learner's latest weights, a pool of
// its snapshots and fixed opponents, in a warm-up phase and a main one:
// Study002League is study 002's fictitious self-play (pool of 20, 80%
// latest, 20% a uniform snapshot) and Study000League study 000's schedule
// (greedy and random for 400 updates, then 70% a pool of the 5 newest
// checkpoints, 15% greedy, 15% random). Network opponents (NetOpponent)
// sample from their masked policy.
//
// The learner's observation is the game's, or with nets.Encoding's
// LegalPlane study 002's three planes (the third marks the legal moves);
// Shaping adds a study's dense rewards (off by default): study 002's
// block and threat bonuses, or study 000's line growth and open-four
// blocks on Sequence.
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
// global-norm gradient clipping and Adam, with the entropy-coefficient and
// learning-rate schedules of Options.
//
// # Recurrent PPO
//
// NewRecurrentPPO trains study 000's CNN-LSTM (nets.Recurrent) on the
// game's feature encoding (nets.Encoding{Features: true}). Each
// environment carries its LSTM state from step to step, zeroed when its
// game starts; a rollout stores the states at its start and the game-start
// flags of every step, and training replays each environment's segment
// from there (minibatches are groups of whole environments), so the
// gradient flows back through time over the segment and stops at its
// start and at game starts. Study000Options holds the study's settings
// (Adam's weight decay among them, in torch.optim.Adam's coupled form).
// NewRecurrentLeague gives a recurrent learner a League: its latest
// weights and snapshots play as RecurrentOpponents, BatchOpponents whose
// moves the VecEnv gathers across environments into one batched LSTM
// step, each keeping its own LSTM state per environment, zeroed at its
// first move of every game.
//
// # Runs
//
// Train runs the updates of one run directory (see ConfigFile): metrics
// per update, checkpoints with Adam's state beside them, and a League's
// snapshots at the checkpoint cadence. With Options.FreshGames every
// update starts new games from streams derived from the seed and the
// update number, so Resume continues a run exactly: the weights after a
// run killed and resumed equal, bit for bit, those of an uninterrupted
// run (opponents with random state of their own take part by implementing
// Reseeder, as SpecOpponent does).
//
// Run is a whole run, as zero.Run is for AlphaZero: from a RunConfig
// (validated by Check, errors naming the `canopy ppo` flag as
// SettingError) it builds the starting net, the environments, the
// opponents or league (agents made in the agent.Env its caller passes)
// and the learner, holds the directory (internal/rundir), records the
// settings and update 0, and trains; with RunOptions.Resume it continues
// the stored run instead, whose settings hold (given flags that differ
// are rundir.Changes naming them). The command only parses flags, calls
// Run and prints (cmd/canopy/ppo.go).
//
// Nothing in this package is safe for concurrent use unless its doc says
// so.
package rl
