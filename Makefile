# Two entry points for a fresh machine (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2

.PHONY: demo rehearsal demo-fingerprints test test-fast test-new-subset slurm-test conda-test lint lock docs docs-tables clean-demo chromium screenshots

# The test and demo environment is the lock (requirements.lock: exact versions and hashes of every package,
# resolved from pyproject.toml's ranges with `make lock`); the package itself goes in on top, without deps.
$(BIN)/snakemake: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

# The MedMNIST reference tool for the tests and benchmarks (see tests/requirements-reference.txt). The file adds
# PyTorch's CPU wheel index; where that index cannot be reached, pip retries it for each of the file's 20
# packages: five retries took 2 min 39 s in all on a machine that reaches PyPI alone, two retries 19 s.
$(VENV)/.reference: tests/requirements-reference.txt $(BIN)/snakemake
	$(BIN)/python -m pip install --quiet --retries 2 -r tests/requirements-reference.txt
	$(BIN)/python -m pip install --quiet --no-deps medmnist==3.0.2
	touch $@

# The demo shaped like the release (its open subsets' images in place), every subset rebuilt and compared.
demo: $(BIN)/snakemake
	$(BIN)/python -m preprocess demo demo --release-images
	$(BIN)/snakemake --cores $(CORES) --config build=all

# The demo's pixel fingerprints, committed as the fixture tests/unit/verify/test_attest.py compares every demo
# build with: after a reviewed change to demo pixels, run this and commit the file.
demo-fingerprints: demo
	cp results/fingerprints.tsv tests/data/demo-fingerprints.tsv

# The real-size fakes built through the workflow: predicted against measured per kind, declared against used
# per job (benchmarks/rehearsal.py; about 10-15 minutes on 2 cores; ITEMS a source). Exits 1 when a bar fails.
ITEMS ?= 8
rehearsal: $(BIN)/snakemake
	$(BIN)/python benchmarks/rehearsal.py --items $(ITEMS) --cores $(CORES)

# The whole suite: every test but the whole_suite one (`make test-new-subset` runs it), in two runs. First those
# that do not run the Snakemake workflow, in parallel as `make test-fast` runs them; then the `workflow` ones one
# at a time (each runs Snakemake on 2 cores, some kill it at a chosen moment: they stay serial, sharing one
# demo build). The second run runs whatever the first gave, so both report their failures, as the one serial run
# did; make fails when either does. The workflow run took 21 min 21 s (1,324 s of CPU) on 2 shared cores, 42 min
# 22 s (1,572 s of CPU) before the greedy job selection of profiles/default and one build of the restricted demo
# (docs/tests.md).
test: $(BIN)/snakemake $(VENV)/.reference
	$(BIN)/python -m pytest $(PARALLEL) -m "not workflow and not whole_suite"; first=$$?; \
	$(BIN)/python -m pytest -m "workflow and not whole_suite" && exit $$first

# The loop while working: every test but those that run the Snakemake workflow end to end (marker `workflow`,
# conftest.py) and the whole_suite one, in parallel (pytest-xdist; each test works in its own tmp_path). One
# worker more than the cores: the tests also wait (on the subprocesses they start, download deadlines, the disk),
# and the extra worker keeps the cores busy meanwhile. Whole files are dealt out, in collection order, which
# conftest.py starts with the files that make a fixture for the module (a full-size raw root, real-size fakes):
# each is made once, and the longest start first (`--dist load` made them on each worker that drew one of
# their tests: about a fifth more CPU; pytest-xdist's loadgroup does not group on pytest 9.2).
TEST_WORKERS ?= $(shell expr $(CORES) + 1)
PARALLEL = -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test-fast: $(BIN)/snakemake $(VENV)/.reference
	$(BIN)/python -m pytest $(PARALLEL) -m "not workflow and not whole_suite"

# What proves that a subset added by registry and demo data alone (tests/data/new_subset, through
# MEDHEB_EXTRA_REGISTRY) needs no code change: tests/datasets/test_new_subset.py, whose whole_suite test runs
# every registry_wide test but the workflow ones again with the subset present (addopts cleared: it deselects
# whole_suite).
test-new-subset: $(BIN)/snakemake $(VENV)/.reference
	$(BIN)/python -m pytest -o addopts=-ra tests/datasets/test_new_subset.py

# Starts a one-node SLURM cluster on 127.0.0.1 (root; installs Debian packages), builds the demo through
# profiles/slurm-ci and compares it with a local build made meanwhile, then stops the daemons. 17 min on 2 shared
# cores (30 SLURM jobs, 676 s of their CPU); 23 min 40 s before the verification steps went in groups (211 SLURM
# jobs, 915 s) and the local build ran beside the SLURM one (docs/tests.md).
slurm-test: $(BIN)/snakemake
	bash .ci/slurm.sh start
	MEDHEB_SLURM=1 $(BIN)/python -m pytest -s tests/workflow/test_slurm.py; status=$$?; bash .ci/slurm.sh stop; exit $$status

# Builds the demo with `snakemake --use-conda` (workflow/envs/preprocess.yaml) and compares its pixels with the
# committed fingerprints; needs conda and the conda-forge channel, which CI does not have.
conda-test: $(BIN)/snakemake
	MEDHEB_CONDA=1 $(BIN)/python -m pytest -s tests/project/test_lock.py -k use_conda

# Debian's Chromium for the report screenshots (and their test); needs root for apt-get.
chromium:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

screenshots: $(BIN)/snakemake chromium
	$(BIN)/python docs/screenshots.py

# Re-resolve requirements.lock after a change of pyproject.toml's dependencies (needs the registry).
lock: $(BIN)/snakemake
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --python-version 3.11 \
		--python-platform x86_64-manylinux_2_28 --generate-hashes --quiet -o requirements.lock

# The documentation site under results/site; --strict fails on a broken link or a page missing from the nav.
docs: $(BIN)/snakemake
	$(BIN)/mkdocs build --strict --quiet

# The registry's figures and tables in README.md and docs/ (marked places), from the shipped registry.
docs-tables: $(BIN)/snakemake
	$(BIN)/python docs/tables.py

lint: $(BIN)/snakemake
	$(BIN)/python -m preprocess demo demo --release-images
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache --no-logo

clean-demo:
	rm -rf demo results logs .snakemake
