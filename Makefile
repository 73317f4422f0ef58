# Every target sets itself up: a fresh machine needs only `make demo` or `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORPUS ?=
# Hypothesis examples per property in `make test`; `make fuzz` raises it.
HYPOTHESIS_PROFILE ?= ci

.PHONY: demo test bench fuzz lint fmt install dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install -q -e .

dev: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'

## make demo [CORPUS="a.txt b.txt"]: train on the standard library's .py files (or CORPUS), show the result
demo: install
	$(BIN)/python -m bytepair.cli.demo $(CORPUS)

## make test: the whole suite, Rust and Python, with the strict linters
test: dev
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features python -- -D warnings
	cargo test --release
	$(BIN)/ruff check python tests benches
	HYPOTHESIS_PROFILE=$(HYPOTHESIS_PROFILE) $(BIN)/python -m pytest -q

## make fuzz: the differential properties with a long budget
fuzz: dev
	BYTEPAIR_PROPTEST_CASES=20000 cargo test --release -- --include-ignored
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q tests -k "property or fuzz"
	# Every rank vocabulary against tiktoken on the whole of every corpus.
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q tests/test_exact_vocabularies.py -k "not property"

## make bench: every benchmark, side by side with its peers
bench: dev
	cargo bench --bench split
	$(BIN)/python benches/train.py
	$(BIN)/python benches/encode.py
	$(BIN)/python benches/load.py

lint: dev
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	$(BIN)/ruff check python tests benches
	$(BIN)/ruff format --check python tests benches

fmt: dev
	cargo fmt
	$(BIN)/ruff format python tests benches
	$(BIN)/ruff check --fix python tests benches

clean:
	rm -rf $(VENV) target demo-out .pytest_cache .hypothesis
