#!/usr/bin/env bash
# Study 000 (Sequence, ../shared/studies/000_f68cc7541c92f39e.txt): the
# evaluation tables of its two learners against its baselines, on the
# study's rule variant (96 cards, no jacks: sequence:jacks=false).
#
# The learners are trained first (both resumable; run the same command
# again to continue; docs/RESULTS.md section 9 says how far they got):
#   AlphaZero (study: 64x5 net, K = 8 determinizations x S = 200 PUCT
#   simulations, leaves valued 0.5 network + 0.5 eight-turn rollout, the
#   first 20 turns sampled, 2500 games per block, Adam 1e-3, batch 1024;
#   here a 32x3 net and 64 simulations over 4 deals in self-play, for the
#   2-core CPU):
#     canopy net init --out runs/seq/init-32x3.safetensors --preset sequence \
#       --game sequence:jacks=false --channels 32 --blocks 3
#     canopy zero --game sequence:jacks=false --net runs/seq/init-32x3.safetensors \
#       --games 256 --trees 64 --sims 64 --det 4 --blend 0.5 --turns 8 \
#       --tempplies 20 --dir 0.5 --steps 60 --batch 256 --optimizer adam \
#       --lr 0.001 --window-iters 2 --eval-games 20 --eval-sims 64 \
#       --baselines sequence-greedy --backend cpu:threads=2 --seed 1 \
#       --iterations 40 --out runs/seq-az
#   and session 10's (a quarter of the moves recorded, KataGo's playout-cap
#   randomisation, and the search's root Q as the value target, which
#   stops the value head memorising games; docs/RESULTS.md section 9),
#   continuing from runs/seq-az2's iteration 3 (the same with --qmix 0.5):
#     canopy zero --game sequence:jacks=false \
#       --net runs/seq-az2/checkpoints/iter-0003.safetensors --games 512 \
#       --trees 128 --sims 64 --det 4 --blend 0.5 --turns 8 --tempplies 20 \
#       --dir 0.5 --pcr 0.25 --qmix 1 --steps 80 --batch 256 \
#       --optimizer adam --lr 0.001 --window-iters 4 --eval-games 20 \
#       --eval-sims 64 --baselines sequence-greedy --backend cpu:threads=1 \
#       --seed 3 --iterations 40 --out runs/seq-az3
#   and session 14's Gumbel runs (Gumbel root search over 8 sampled moves
#   gives sharper policy targets than 64 visits; --turns 8 as the study,
#   then the same continued from its iteration 21 with full rollouts in
#   self-play, so that the root Q the value head learns (--qmix 1) is a
#   rollout's value instead of about 0; --eval-policy-games: the network
#   alone against Greedy every iteration):
#     canopy zero --game sequence:jacks=false --net runs/seq/init-32x3.safetensors \
#       --games 512 --trees 64 --sims 64 --det 2 --gumbel --gumbelm 8 \
#       --blend 0.5 --turns 8 --pcr 0.25 --qmix 1 --steps 80 --batch 256 \
#       --optimizer adam --lr 0.001 --window-iters 4 --eval-games 20 \
#       --eval-sims 64 --baselines sequence-greedy \
#       --backend cpu:threads=1,precision=bf16 --seed 11 --iterations 200 \
#       --out runs/seq-gumbel
#     canopy zero ...the same... --net runs/seq-gumbel/checkpoints/iter-0021.safetensors \
#       --turns 1000 --eval-policy-games 200 --seed 12 --out runs/seq-gumbel-full
#   and session 16's (the study's eight-turn rollouts with the cut scored
#   by Sequence's static evaluation, which play as well as full ones, in
#   self-play as in evaluation):
#     canopy zero ...the same... --net runs/seq-gumbel-full/checkpoints/iter-0037.safetensors \
#       --turns 8 --cut state --cutscale 500 --eval-policy-games 200 --seed 13 \
#       --out runs/seq-gumbel-state
#   and its continuation with half the outcome in the value target (session
#   16, started at its end; the value head above learned nothing new):
#     canopy zero ...the same... --net runs/seq-gumbel-state/checkpoints/iter-0042.safetensors \
#       --qmix 0.5 --seed 14 --out runs/seq-gumbel-state-q05
#   Recurrent PPO as the study trains it (CNN-LSTM; 1,000 updates of about
#   2.5k frames, 16 x 160 here; 5 epochs of one minibatch of 2,560, the
#   study's 2,048 rounded to whole environments; Adam 3e-4, weight decay
#   1e-5; entropy 0.01 -> 0.001 over the first 40%; 400 warm-up updates
#   against Greedy and Random, then 70% the last 5 checkpoints, 15% each
#   baseline; its two shaped rewards):
#     canopy ppo --game sequence:jacks=false --preset sequence-lstm \
#       --league schedule --greedy sequence-greedy --envs 16 --env-steps 160 \
#       --epochs 5 --minibatches 1 --lr 3e-4 --wd 1e-5 --ent 0.01 \
#       --ent-final 0.001 --ent-decay 0.4 --league-warmup 400 --updates 1000 \
#       --checkpoint-every 25 --shaping --out runs/ppo-seq-study
#   and Canopy's first run (16 x 1,024 frames per update, 8 minibatches,
#   against sequence-greedy throughout, no shaping):
#     canopy ppo --game sequence:jacks=false --preset sequence-lstm \
#       --opponent sequence-greedy --envs 16 --env-steps 1024 --epochs 5 \
#       --minibatches 8 --lr 3e-4 --ent 0.01 --ent-final 0.001 \
#       --ent-decay 0.4 --updates 140 --checkpoint-every 10 --out runs/ppo-seq
#
# Rows (200 games each by default, the issue's count; seats alternate):
#   az-vs-greedy   the study's search (det=8, sims=1600 = 8 x 200,
#                  blend=0.5, turns=8) on AZ_NET against sequence-greedy;
#                  the study reports 85%, the issue's target; rollouts
#                  cut after 8 turns score 0 (cut=zero, az's default)
#   az-state-vs-greedy  the same with the cut-off rollouts scored by
#                  Sequence's static evaluation (cut=state, open windows
#                  and sequences, tanh of the difference / 500; the
#                  study does not say how it scored them)
#   ppo-vs-greedy  PPO_NET's policy (LSTM state kept through the game)
#                  against sequence-greedy; the study reports 75%
#   table          Random, Greedy, PPO and AlphaZero all-play-all (the
#                  study's four-agent table)
#   mcts-vs-greedy Canopy's reference: rollout MCTS with the same 1,600
#                  simulations per move and 8 deals, no network
#   az-init-state-vs-greedy  az-state-vs-greedy's search on an untrained
#                  32x3 network (what the trained network adds)
#   ppo-curve-RUN-NNNNNN  each checkpoint of PPO_RUN (default
#                  runs/ppo-seq-study) against sequence-greedy: the
#                  study's Figure 1 (rows appear as checkpoints do)
# AZ_NET and PPO_NET default to the newest checkpoints of AZ_RUN (default
# runs/seq-gumbel-state, else runs/seq-gumbel-full, else runs/seq-az3,
# else runs/seq-az; the Polyak average) and PPO_RUN. Budgets are
# simulations, so PARALLEL defaults to 8 here: network agents batch their
# leaves across the games in play.
#
# Run `docs/studies/sequence.sh --list` for the commands; see lib.sh for
# the options (GAMES=N for a reduced run, --time to measure).
PARALLEL=${PARALLEL:-8}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STUDY=sequence
GAMES_DEFAULT=200

# newest FILE_GLOB: the last file (in name order) matching the glob, or
# the glob itself when none does (the row then fails with arena's error).
newest() {
	local f last=$1
	for f in $1; do
		[[ -e $f ]] && last=$f
	done
	echo "$last"
}

if [[ -z ${AZ_RUN:-} ]]; then
	for AZ_RUN in "$ROOT"/runs/{seq-gumbel-state,seq-gumbel-full,seq-az3,seq-az}; do
		[[ -d $AZ_RUN ]] && break
	done
fi
AZ_NET=${AZ_NET:-$(newest "$AZ_RUN/checkpoints/iter-*.avg.safetensors")}
PPO_RUN=${PPO_RUN:-$ROOT/runs/ppo-seq-study}
PPO_NET=${PPO_NET:-$(newest "$PPO_RUN/update-??????.safetensors")}

g=sequence:jacks=false
az="az:net=$AZ_NET,det=8,sims=1600,blend=0.5,turns=8,backend=cpu"
ppo="policy:net=$PPO_NET"
row az-vs-greedy "$g" "$az;sequence-greedy"
row ppo-vs-greedy "$g" "$ppo;sequence-greedy"
row table "$g" "random;sequence-greedy;$ppo;$az"
row az-state-vs-greedy "$g" "$az,cut=state,cutscale=500;sequence-greedy"
row mcts-vs-greedy "$g" "mcts:sims=1600,det=8;sequence-greedy"
row az-init-state-vs-greedy "$g" "az:net=init,det=8,sims=1600,blend=0.5,turns=8,backend=cpu,cut=state,cutscale=500;sequence-greedy"
# The PPO curve: every checkpoint of PPO_RUN present now against Greedy.
for f in "$PPO_RUN"/update-??????.safetensors; do
	[[ -e $f ]] || continue
	u=${f##*/update-}
	row "ppo-curve-$(basename "$PPO_RUN")-${u%.safetensors}" "$g" "policy:net=$f;sequence-greedy"
done

main "$@"
