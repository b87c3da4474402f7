# Every target sets up .venv on first use, so each works on a fresh machine as one command.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench figures sample-votes reproduce-paper clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev,dask,parquet]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/pate-analyze sample_votes/mnist_250_votes.npy --labels sample_votes/mnist_250_labels.npy

test: $(STAMP)
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check pate_cli tests benchmarks scripts

bench: $(STAMP)
	$(BIN)/python benchmarks/run_benchmarks.py

reproduce-paper: $(STAMP)
	$(BIN)/python scripts/reproduce_paper.py

sample-votes: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[samples]'
	$(BIN)/python scripts/make_sample_votes.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache

figures: $(STAMP)
	$(BIN)/python scripts/make_figures.py
