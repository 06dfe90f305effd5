# Common tasks. `make setup` and `make test` are the README's quick start; .ci/run runs them in a
# fresh virtualenv by setting VENV. Variables (set on the command line or in the environment):
#   VENV    the virtualenv to create and use               (default: .venv)
#   PYTHON  the interpreter that creates it                 (default: python3)
#   EXTRAS  the pyproject extras to install                 (default: test,cpu,onnx)
VENV ?= .venv
PYTHON ?= python3
# --- what a CPU OpenCL device needs -------------------------------------------------------------
# `cpu` is the pyproject extra with Intel's OpenCL CPU runtime (x86-64 Linux; elsewhere it installs
# nothing and fusec uses a GPU driver or PoCL already on the machine). Packages the OpenCL runtime
# needs beyond pyproject's extras go in OPENCL_PACKAGES.
EXTRAS ?= test,cpu,onnx
OPENCL_PACKAGES ?=
# ------------------------------------------------------------------------------------------------

BIN := $(VENV)/bin
STAMP := $(VENV)/.fusec-installed

.PHONY: setup install example test lit pytest lint clean fuzz docs

## setup: create $(VENV), install fusec into it, then fuse and run an example
setup: install example

## install: create $(VENV) and install fusec (editable) with $(EXTRAS); again when pyproject changes
install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]' $(OPENCL_PACKAGES)
	touch $@

## example: print examples/mlp.mlir fused, then run it on an OpenCL device against numpy
example: $(STAMP)
	$(BIN)/fusec-opt examples/mlp.mlir -p default
	$(BIN)/fusec-run examples/mlp.mlir --check

## test: every test, lit and pytest; both run, and the status fails if either fails
test: $(STAMP)
	@status=0; \
	$(BIN)/lit -v lit_tests || status=1; \
	$(BIN)/pytest -q tests || status=1; \
	exit $$status

## lit, pytest: one half of `make test`
lit: $(STAMP)
	$(BIN)/lit -v lit_tests

pytest: $(STAMP)
	$(BIN)/pytest -q tests

## fuzz: random programs against the reference, mangled text against fusec-opt (FUZZ_SEED,
## FUZZ_COUNT); minimized failing cases go to fuzz-failures/
FUZZ_SEED ?= 0
FUZZ_COUNT ?= 200
fuzz: $(STAMP)
	$(BIN)/fusec-fuzz --seed $(FUZZ_SEED) --count $(FUZZ_COUNT) --out fuzz-failures

## docs: rewrite the generated parts of docs/ (the pass reference) from the registries
docs: $(STAMP)
	$(BIN)/python -m fusec.tools.docs_pages

## lint: ruff (not a dependency: `$(BIN)/pip install ruff` first)
lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## clean: remove lit outputs and caches (not $(VENV))
clean:
	rm -rf lit_tests/*/Output lit_tests/.lit_test_times.txt .pytest_cache .ruff_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
