# Canopy developer targets. `make run` and `make test` are the README's two
# set-up commands; .ci/run runs `make test`.
GO      ?= go
PKGS    ?= ./...
RUNDIR  ?= runs/$(shell date +%Y%m%d-%H%M%S)

.PHONY: all build run test test-fleet test-full test-browser race bench lint fuzz gpu-check cuda-compile-check clean valgrind chromium ort pyonnx

all: lint test

build:
	CGO_ENABLED=0 $(GO) build -o bin/canopy ./cmd/canopy

# The main job on the embedded default (CPU, shipped settings): two more
# iterations of the AlphaZero loop (self-play, training, evaluation, plots)
# in runs/zero-demo; run it again to continue the run.
run: build
	./bin/canopy zero --out runs/zero-demo --more 2

# The test suite, the browser tests and the performance gate: exactly what
# CI runs (.ci/run). Short mode keeps it well under 15 minutes on 2 cores.
test: ort pyonnx
	$(GO) vet $(PKGS)
	$(GO) test -short -count=1 $(PKGS)
	$(MAKE) test-fleet
	$(MAKE) python-test
	$(MAKE) test-browser
	$(MAKE) perf-check

# The fleet's fault tests (docs/DISTRIBUTED.md), which -short leaves out:
# `canopy zero --nats embedded` and 3 `canopy worker` processes killed
# with SIGKILL at random moments must end with every game once and the
# weights of the run without faults (TestFleetSurvivesKills, about 40 s
# on 2 cores; its log names the fault seed), then the race detector over
# package fleet (about 10 s of tests after a race build of the NATS
# server, a minute or more on a fresh machine).
test-fleet:
	$(GO) test -count=1 -run '^(TestFleetSurvivesKills|TestAsyncFleetSurvivesKills)$$' ./cmd/canopy/
	$(GO) test -short -race -count=1 ./fleet/...

# The web UI driven by a real headless Chromium (web/browser_test.go: a
# full game by clicks, live analysis, replay, screenshots of every board in
# runs/web-screenshots). Chromium is installed when missing (as root with
# apt-get, as CI machines allow); elsewhere the tests skip and say why.
test-browser: chromium
	$(GO) test -count=1 -run '^TestBrowser' ./web/

chromium:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing chromium for the browser tests"; \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; } || \
	      echo "WARNING: installing chromium failed: the browser tests will skip"; \
	  else echo "chromium is missing (sudo apt-get install chromium): the browser tests will skip"; fi; }

# ONNX Runtime's CPU library for the ort backend's tests (nets/ortbackend):
# libonnxruntime.so.1 as npm's onnxruntime-node package carries it inside its
# registry tarball (no install script involved), fetched once with `npm pack`,
# checked against its pinned SHA-256 and cached in $(ORT_DIR), the user's
# cache, which every clone shares (CI's fresh clones fetch it once). The
# library search of nets/ortbackend looks there; elsewhere set
# CANOPY_ORT_LIB=$(ORT_DIR)/libonnxruntime.so.1.
# Unreachable registry: a warning, and the ORT tests skip saying why.
ORT_VERSION ?= 1.30.0
ORT_SHA256  ?= ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23
ORT_DIR     ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/canopy/ort
ort:
	@if [ -f $(ORT_DIR)/libonnxruntime.so.1 ]; then exit 0; fi; \
	if [ "$$(uname -sm)" != "Linux x86_64" ]; then \
	  echo "WARNING: make ort fetches ONNX Runtime for Linux x86-64 only; set CANOPY_ORT_LIB to a libonnxruntime for $$(uname -sm), or the ORT tests skip"; exit 0; fi; \
	tmp=$$(mktemp -d) || exit 0; tgz=$$tmp/onnxruntime-node-$(ORT_VERSION).tgz; so=package/bin/napi-v6/linux/x64/libonnxruntime.so.1; \
	echo "fetching ONNX Runtime $(ORT_VERSION) (CPU, npm onnxruntime-node, 113 MB) into $(ORT_DIR)"; \
	if command -v npm >/dev/null; then (cd $$tmp && npm pack --silent onnxruntime-node@$(ORT_VERSION) >/dev/null 2>&1); \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && { apt-get update -qq && apt-get install -y -qq --no-install-recommends npm >/dev/null; }; then \
	  (cd $$tmp && npm pack --silent onnxruntime-node@$(ORT_VERSION) >/dev/null 2>&1); \
	else echo "npm is missing (sudo apt-get install npm)"; fi; \
	if [ -f $$tgz ] && tar -xzf $$tgz -C $$tmp $$so && echo "$(ORT_SHA256)  $$tmp/$$so" | sha256sum -c --status; then \
	  mkdir -p $(ORT_DIR) && mv $$tmp/$$so $(ORT_DIR)/libonnxruntime.so.1.part && mv $(ORT_DIR)/libonnxruntime.so.1.part $(ORT_DIR)/libonnxruntime.so.1; \
	else echo "WARNING: could not fetch onnxruntime-node $(ORT_VERSION) from the npm registry (offline, or the file changed): the ORT tests will skip"; fi; \
	rm -rf $$tmp

# The outside checks of ONNX export (nets/onnx: onnx.checker with full shape
# inference and a numpy evaluator of the graph) need Debian's python3-onnx
# and python3-numpy: install them when missing (as root with apt-get, as CI
# machines allow); elsewhere those tests skip and say why.
pyonnx:
	@/usr/bin/python3 -c 'import numpy, onnx' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing python3-onnx and python3-numpy for the ONNX checks"; \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-onnx python3-numpy >/dev/null; } || \
	      echo "WARNING: installing python3-onnx failed: the ONNX outside checks will skip"; \
	  else echo "python3-onnx is missing (sudo apt-get install python3-onnx python3-numpy): the ONNX outside checks will skip"; fi; }

# The full suite: deeper perft, every solver line, longer random games.
test-full:
	$(GO) test -count=1 -timeout 60m $(PKGS)

race:
	$(GO) test -short -race -count=1 ./batcher/... ./search/... ./selfplay/... ./fleet/... ./zero/... ./train/... ./rl/... ./web/... ./games/... ./agent/... ./arena/... ./kernels/... ./nets/... ./cuda/...

bench:
	mkdir -p $(RUNDIR)
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS) | tee $(RUNDIR)/bench.txt

# One PPO update step (minibatch of 2048: forward, loss, backward, clip,
# Adam) in Canopy and then in Debian's PyTorch on the same machine, back to
# back, best of 3 each (docs/BENCHMARKS.md, "PPO update against PyTorch").
.PHONY: bench-ppo-torch
bench-ppo-torch:
	$(GO) test -run '^$$' -bench 'PPOUpdate' -benchtime 3x -count 3 ./rl
	/usr/bin/python3 rl/testdata/bench_ppo_torch.py --seconds 2 --repeat 3 --dense-as-conv

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	$(GO) vet $(PKGS)

# -fuzzminimizetime 100x: minimising each new interesting input with the
# default 60 s budget takes the whole 10 s (0 execs/s on the weights parser
# and the game-log reader); 100 tries keep the targets fuzzing.
fuzz:
	@for p in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$p | grep ^Fuzz); do \
	    echo "fuzz $$p $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 10s -fuzzminimizetime 100x $$p || exit 1; \
	  done; \
	done

# Static test and benchmark binaries for a GPU machine (see README, "GPU"),
# and the ONNX model gpucheck --onnx runs on ONNX Runtime's GPU providers.
gpu-check:
	mkdir -p .device
	CGO_ENABLED=0 $(GO) build -o .device/gpucheck ./cmd/gpucheck
	CGO_ENABLED=0 $(GO) test -c -o .device/cuda.test ./cuda
	CGO_ENABLED=0 $(GO) test -c -o .device/cudabackend.test ./nets/cudabackend
	cp nets/ortbackend/testdata/bench.onnx .device/bench.onnx

# Compile every CUDA kernel with a real NVRTC for sm_75..sm_90 (no GPU or
# driver needed) and fail on errors; with ptxas on PATH, print registers
# per kernel and fail on spills. NVRTC is looked for in CANOPY_CUDA_LIBS
# and the usual places (see README, GPU); it is never installed here. Not
# in .ci/run: CI machines have no NVRTC and fetching one needs the network.
cuda-compile-check:
	mkdir -p .device
	CGO_ENABLED=0 $(GO) build -o .device/gpucheck ./cmd/gpucheck
	@.device/gpucheck --compile-only --archs 75,80,86,87,89,90 || { \
	  echo; echo "Without NVRTC: apt-cache policy libnvrtc12 nvidia-cuda-toolkit shows whether Debian's non-free"; \
	  echo "archive is configured. If it is not, add it (Components: main contrib non-free non-free-firmware in"; \
	  echo "/etc/apt/sources.list.d/debian.sources), then: sudo apt-get update && sudo apt-get install libnvrtc12 nvidia-cuda-toolkit"; \
	  echo "On Debian 12 (non-free has CUDA 11.8), without installing: apt-get download libnvrtc11.2 libnvrtc-builtins11.8,"; \
	  echo "  dpkg-deb -x each .deb into DIR, then CANOPY_CUDA_LIBS=DIR/usr/lib/x86_64-linux-gnu make cuda-compile-check"; \
	  echo "Or unpack a folder with libnvrtc.so.12 and libnvrtc-builtins.so.12.* and run"; \
	  echo "  CANOPY_CUDA_LIBS=/that/folder PATH=/cuda/bin:\$$PATH make cuda-compile-check"; exit 1; }

clean:
	rm -rf bin

# ---- Performance gate and A/B benchmarks (docs/PERFORMANCE.md) ----
# The gate's binary: no cgo, baseline x86-64, no heap base randomisation
# (instruction counts must not depend on where the heap lands).
PERF_BUILD = CGO_ENABLED=0 GOAMD64=v1 GOEXPERIMENT=norandomizedheapbase64 $(GO) build
PERF_REV  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
OLD       ?=
NEW       ?=
BENCHPKGS ?= ./...
BENCH     ?= .
BENCHTIME ?= 1s
ROUNDS    ?= 5
CANOPY    ?=

.PHONY: perf-check perf-baseline perf-selftest bench-compare

# Instruction counts of every gate workload under cachegrind against
# perf/baseline.json (fails above +3%), then native CPU/heap profiles in
# runs/perf-<rev>/ with their top functions. CI runs it after `make test`.
perf-check: valgrind
	$(PERF_BUILD) -o bin/perf ./perf
	./bin/perf check -profiles runs/perf-$(PERF_REV)

# The gate counts instructions under valgrind: install it when it is missing
# (as root with apt-get, as CI machines allow), else say how.
valgrind:
	@command -v valgrind >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing valgrind for the performance gate"; apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; \
	  else echo "the performance gate needs valgrind: sudo apt-get install valgrind"; exit 1; fi; }

# Rewrites perf/baseline.json and perf/baseline/*.txt: commit them saying why.
perf-baseline: valgrind
	$(PERF_BUILD) -o bin/perf ./perf
	./bin/perf baseline

# Proves the gate fails: extra work built into Connect Four's fast playout
# loop (-tags perfinject) must be reported in exactly the workloads that run
# it; playout-connect4 and solver-l3 are the controls.
perf-selftest:
	$(PERF_BUILD) -tags perfinject -o bin/perf-inject ./perf
	./bin/perf-inject check -expect playout-fast-connect4,uct-connect4 \
	  playout-connect4 playout-fast-connect4 uct-connect4 solver-l3

# A/B benchmarks of two revisions on this machine, interleaved, then
# benchstat: make bench-compare OLD=HEAD~1 [NEW=HEAD] [BENCHPKGS=./games/connect4]
# [BENCH=Playout] [BENCHTIME=1s] [ROUNDS=5] [CANOPY='games --seconds 1'].
# NEW defaults to the working tree; CANOPY runs `canopy bench ...` instead of
# the Go benchmarks.
bench-compare:
	@test -n "$(OLD)" || { echo "usage: make bench-compare OLD=<rev> [NEW=<rev>] [BENCHPKGS=...] [BENCH=regexp] [BENCHTIME=1s] [ROUNDS=5] [CANOPY='games --seconds 1']"; exit 2; }
	$(GO) run ./perf ab -old '$(OLD)' -new '$(NEW)' -pkgs '$(BENCHPKGS)' -bench '$(BENCH)' \
	  -benchtime '$(BENCHTIME)' -rounds '$(ROUNDS)' -canopy '$(CANOPY)'

# ---- Python (docs/PYTHON.md) ----
# `make python` builds libcanopy.so (cgo, -buildmode=c-shared: the only
# cgo target; bin/canopy stays CGO_ENABLED=0) into python/canopy/ and puts
# the package on the path of a virtual environment made with Debian's
# python3-venv (--system-site-packages: Debian's numpy and torch are
# visible): . .venv-python/bin/activate, then import canopy.
.PHONY: python python-deps python-test
PYTHON ?= /usr/bin/python3
VENV   ?= .venv-python

python: python-deps
	CGO_ENABLED=1 $(GO) build -buildmode=c-shared -o python/canopy/libcanopy.so ./python/libcanopy
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv --system-site-packages --without-pip $(VENV)
	@$(VENV)/bin/python -c 'import site, sys; open(site.getsitepackages()[0] + "/canopy.pth", "w").write(sys.argv[1] + "\n")' "$(CURDIR)/python"
	@$(VENV)/bin/python -c 'import canopy, numpy; print("canopy: %d games; python:", len(canopy.games()))' >/dev/null && echo "canopy installed in $(VENV) (. $(VENV)/bin/activate)"

# numpy and venv from Debian when missing (as root with apt-get, as CI
# machines allow; torch too, for the examples and the PyTorch round trip,
# whose tests skip without it); elsewhere say how.
python-deps:
	@$(PYTHON) -c 'import numpy, venv' 2>/dev/null && $(PYTHON) -c 'import torch' 2>/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing python3-numpy python3-venv python3-torch for the Python package"; \
	    { apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-numpy python3-venv >/dev/null; } || \
	      { echo "installing python3-numpy python3-venv failed"; exit 1; }; \
	    apt-get install -y -qq --no-install-recommends python3-torch >/dev/null || \
	      echo "WARNING: installing python3-torch failed: the PyTorch tests and examples will skip"; \
	  else $(PYTHON) -c 'import numpy, venv' 2>/dev/null || { echo "the Python package needs numpy and venv: sudo apt-get install python3-numpy python3-venv"; exit 1; }; fi; }

# The Python package's tests (stdlib unittest): the API, bad input, leaks,
# fork, the examples' smoke runs. bin/canopy for the shard and az:net
# round trips.
python-test: python build
	cd python && ../$(VENV)/bin/python -m unittest discover -s tests
