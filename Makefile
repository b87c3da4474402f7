# Every target sets up .venv on first use, so each works on a fresh machine as one command.
#
# make test reads the papers' votes from ../shared/paper_votes beside the repository when
# it is there (those tests are skipped when it is not, and fail under CI=true). From a
# checkout elsewhere, e.g. a git worktree: PATE_SHARED=/path/to/shared make test
# PATE_TEST_DASK_TIMEOUT (seconds, default 20) bounds the tests' waits for a Dask scheduler.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The regression fixtures were recorded with AVX2 numerics; on an x86-64 machine with AVX-512,
# numpy's AVX-512 exp/log and OpenBLAS's AVX-512 kernels round some last bits otherwise, so
# make test pins both to AVX2 (names a machine lacks are ignored; see docs/explanation/numerics.md).
ifeq ($(shell uname -m),x86_64)
PINNED_NUMERICS := NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512F AVX512CD AVX512_SKX AVX512_CLX \
	AVX512_CNL AVX512_ICL AVX512_SPR" OPENBLAS_CORETYPE=Haswell
endif
# pytest-xdist: one test process per core; PYTEST_FLAGS="-n 0" runs the suite in one process.
PYTEST_FLAGS ?= -n auto
# Bytecode cached (__pycache__/, ignored by git) even where the environment sets
# PYTHONDONTWRITEBYTECODE: else each test process, and each command a test starts, compiles
# the package and pytest rewrites every test module's asserts again (about 3 s of CPU per
# process for the suite's modules).
CACHE_BYTECODE := PYTHONDONTWRITEBYTECODE=

.PHONY: demo test lint docs bench bench-large bench-huge figures sample-votes token-votes reproduce-paper clean report-check

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev,dask,parquet,accounting,report,docs,crosscheck]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/pate-analyze sample_votes/mnist_250_votes.npy --labels sample_votes/mnist_250_labels.npy

test: $(STAMP)
	$(CACHE_BYTECODE) $(PINNED_NUMERICS) $(BIN)/python -m pytest -q $(PYTEST_FLAGS)

# mypy checks the files [tool.mypy] in pyproject.toml names (the public API, decisions, rows, threads, mechanisms, accounting).
# vulture: no dead code (names only a framework or the tests use: vulture_whitelist.py).
lint: $(STAMP)
	$(BIN)/ruff check pate_cli tests benchmarks scripts
	$(BIN)/mypy
	$(BIN)/vulture pate_cli vulture_whitelist.py --min-confidence 60

# The documentation site (MkDocs, Material theme) into site/; --strict: a warning or a broken
# link fails the build. The pages' examples are tests (tests/test_readme.py), not run here.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

bench: $(STAMP)
	$(BIN)/python benchmarks/run_benchmarks.py --readme benchmarks/README.md
	$(BIN)/python benchmarks/totals_memory.py
	$(BIN)/python benchmarks/token_votes.py
	$(BIN)/python benchmarks/cluster.py
	$(BIN)/python benchmarks/multilabel_memory.py

# The 10^7 x 10 rows of totals-only vs per-query memory (a few minutes, ~2 GB for the table).
bench-large: $(STAMP)
	PATE_BENCH_LARGE=1 $(BIN)/python benchmarks/totals_memory.py
	PATE_BENCH_LARGE=1 $(BIN)/python benchmarks/token_votes.py
	PATE_BENCH_LARGE=1 $(BIN)/python benchmarks/cluster.py

# 10^6, 10^7 and 10^8 x 10 (a 2 GB vote file generated in a temporary directory).
bench-huge: $(STAMP)
	PATE_BENCH_HUGE=1 $(BIN)/python benchmarks/totals_memory.py

reproduce-paper: $(STAMP)
	$(BIN)/python scripts/reproduce_paper.py

sample-votes: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[samples]'
	$(BIN)/python scripts/make_sample_votes.py

# The token-vote samples: tokens_stdlib.npz (real n-gram teachers on the standard library's
# sources; about 2 minutes, numpy only) and the synthetic tokens_zipf.npz.
token-votes: $(STAMP)
	$(BIN)/python scripts/make_corpus_token_votes.py
	$(BIN)/python scripts/make_token_votes.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache

# Every figure the README and docs/ show, into docs/figures/ (the report example's PNG needs
# chromium; without it the HTML is regenerated and the PNG left as it is).
figures: $(STAMP)
	$(BIN)/python scripts/make_figures.py
	$(BIN)/python scripts/make_report_example.py

# The browser check of pate-report's HTML: installs headless Chromium (Debian package
# chromium) when missing, then renders a report to PNG (tests/outputs/test_report_browser.py).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
report-check: $(STAMP)
	command -v chromium >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; }
	$(BIN)/python -m pytest -q -n 0 -rs tests/outputs/test_report_browser.py
