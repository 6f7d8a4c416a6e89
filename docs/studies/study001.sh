# study001.sh: study 001's three searches (the Tetris Link thesis: UCT,
# RAVE, PoolRAVE) as mcts options, in the thesis's constants and in
# Canopy's, shared by tetrislink.sh and hex.sh. It is sourced, not run;
# tetrislink.sh's header says how each constant was mapped.
#
#   thesis-*       UCT with Cp = 2 on 0/1 rewards; RAVE x + alpha x_RAVE +
#                  sqrt(2 ln n / n_j) with alpha = (1000 - n_RAVE)/1000 as
#                  printed (negative beyond 1000 AMAF visits); PoolRAVE
#                  with its pool in tree selection (p = 0.5, k = 10)
#   thesisclamp-*  the same RAVE and PoolRAVE with alpha clamped at 0
#                  (ravesched=study001clamp)
#   canopy-*       Canopy's defaults
# shellcheck disable=SC2034 # method and order are read by the scripts that source this file
declare -A method=(
	[thesis-uct]="sel=uct,rewards=01,c=5.657"
	[thesis-rave]="sel=rave,ravesched=study001,ravek=1000"
	[thesis-poolrave]="sel=poolrave,ravesched=study001,ravek=1000,pool=tree,poolp=0.5,poolk=10"
	[thesisclamp-rave]="sel=rave,ravesched=study001clamp,ravek=1000"
	[thesisclamp-poolrave]="sel=poolrave,ravesched=study001clamp,ravek=1000,pool=tree,poolp=0.5,poolk=10"
	[canopy-uct]="sel=uct"
	[canopy-rave]="sel=rave"
	[canopy-poolrave]="sel=poolrave"
)
order=(thesis-uct thesis-rave thesis-poolrave thesisclamp-rave thesisclamp-poolrave canopy-uct canopy-rave canopy-poolrave)
