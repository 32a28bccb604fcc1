# posenc: two commands on a fresh machine.
#   make lab    set up .venv from requirements.lock and open JupyterLab on your own copy of the notebooks
#   make test   add the tests' tools (requirements-dev.lock) to it and run every test, the notebooks (nbval) included
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
# This machine's pip lists local wheel folders that hold only some packages; its
# warnings about the others are noise.
QUIET_PIP := 2>&1 | { grep -v 'is ignored: it is neither a file nor a directory' || true; }
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
# Extra flags for `make lab` and `make teach`; the tests pass --no-browser, a port and a token here.
LAB_EXTRA ?=
# The learner's own copy of the notebooks that `make lab` opens (tools/student_edition.py --lab).
LEARNER ?= learner
# Jupyter refuses to run as root unless told; containers and CI often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
# pip installs without compiling to bytecode (it would compile all of torch on one core, much of which
# nothing imports); Python compiles a module the first time a process imports it and keeps the .pyc
# for the next. Where PYTHONDONTWRITEBYTECODE is set, as on this project's machines, nothing would be
# kept and every process (each kernel, each test worker) would compile torch again: make's commands
# run without it.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: lab teach check test test-oldest-cpu test-setup test-teacher fuzz setup browser notebooks student assignment grade images site slides lock bench clean help
help:
	@echo "make lab        open JupyterLab on your own copy of the notebooks, solutions removed (sets up .venv first)"
	@echo "make teach      open JupyterLab on the teacher's edition, each solution collapsed under its exercise"
	@echo "make check      the linter and the unit and property tests: the quick loop while changing code"
	@echo "make test       run every test, nbval and the browser tests included"
	@echo "make test-oldest-cpu  each notebook's learner's edition under the oldest CPU, in nbval (about 3 minutes; CI runs it)"
	@echo "make test-setup the setup without make (docs/developing.md) in a fresh venv, about 3 minutes; CI runs it"
	@echo "make test-teacher  a copy with another running example: make notebooks for 00-08, then the tests (about 7 minutes; CI runs it)"
	@echo "make fuzz       the wider random hunt: new examples each run, 20 times as many (prints its seed)"
	@echo "make notebooks  re-execute every notebook in place (the stored outputs); NOTEBOOK=\"03 05\" only those"
	@echo "make student    write the learner's edition (solutions removed), executed, to build/student/"
	@echo "make assignment NOTEBOOK=03   notebook 03's exercises as a graded assignment (otter), in build/assignments/03/"
	@echo "make grade SUBMISSIONS=folder  grade the collected notebooks in folder into one CSV, without Docker"
	@echo "make images     redraw images/ from the package"
	@echo "make slides     reveal.js slides of every notebook, offline, in build/site/slides/"
	@echo "make site       the offline HTML sites: the teacher's in build/site/, the students' (no solutions) in build/site-students/"
	@echo "make bench      run the benchmarks, results in benchmarks/results/"
	@echo "make lock       re-resolve requirements.in and requirements-dev.in into their locks and environment.yml"

# The lock pins torch==2.13.0 without the "+cpu" label, so that macOS and Windows (whose wheels have no
# label) can install it. On Linux, PyPI's 2.13.0 is the CUDA build with gigabytes of CUDA packages; PyTorch's
# own index has 2.13.0+cpu, which pip prefers when it can see it. Ask that index only when it answers:
# a machine that cannot reach it (like this project's CI, whose pip has the CPU wheel locally) would
# otherwise wait on it for every package.
TORCH_CPU_INDEX = $(shell $(PYTHON) -c "import socket; socket.create_connection(('download.pytorch.org', 443), timeout=3)" \
  2>/dev/null && echo --extra-index-url https://download.pytorch.org/whl/cpu)

# Two locks: requirements.lock is a learner's environment (`make lab`), requirements-dev.lock what the tests and
# tools add to it (`make check`, `make test`). Each is installed when it or the package metadata changes (pip without
# bytecode: see unexport above). A lock but torch goes in with uv (pinned in requirements-dev.lock), without
# dependencies (the locks have them all): a hundred-odd packages in about ten seconds, where pip takes about a
# minute. uv asks PyPI only; where it cannot reach it, pip installs them (from wherever pip is set to look). torch
# goes in with pip, which finds the CPU build (TORCH_CPU_INDEX above, or a local wheel where pip is set up to see
# one, as on this project's machines: uv looks in neither). For a learner's environment uv is put in a folder of its
# own and removed afterwards: a learner does not get it.
# JupyterLab's defaults for the suite (no news pop-up) go where a plain `pip install .` puts them; an editable
# install skips data files, so they are copied here.
LAB_DEFAULTS := $(VENV)/share/jupyter/lab/settings/overrides.d
WITHOUT_TORCH := $(VENV)/requirements-without-torch.txt
UV_PIN = $(shell grep '^uv==' requirements-dev.lock)
SETUP_UV := $(VENV)/setup-uv
$(STAMP): requirements.lock pyproject.toml tools/jupyterlab/posenc.json tools/jupyterlab/jupyter_server_config.json \
          tools/jupyterlab/ipython_kernel_config.json
	@echo "Installing the learner's pinned environment into $(VENV) (first run only, under a minute)..."
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@grep -v '^torch==' requirements.lock > $(WITHOUT_TORCH)
	@rm -rf $(SETUP_UV)
	@{ $(BIN)/pip install --quiet --no-compile --target $(SETUP_UV) $(UV_PIN) $(QUIET_PIP) \
	   && $(SETUP_UV)/bin/uv pip install --quiet --python $(BIN)/python --no-deps -r $(WITHOUT_TORCH); } \
	  || { echo "uv could not install requirements.lock; pip installs it instead (about a minute)"; \
	       $(BIN)/pip install --quiet --no-compile -r $(WITHOUT_TORCH) $(QUIET_PIP); }
	@rm -rf $(SETUP_UV)
	@$(BIN)/pip install --quiet --no-compile $$(grep '^torch==' requirements.lock) $(TORCH_CPU_INDEX) $(QUIET_PIP)
	@$(BIN)/pip install --quiet --no-deps --no-build-isolation -e . $(QUIET_PIP)
	@mkdir -p $(LAB_DEFAULTS) $(VENV)/etc/jupyter $(VENV)/etc/ipython
	@cp tools/jupyterlab/posenc.json $(LAB_DEFAULTS)/
	@cp tools/jupyterlab/jupyter_server_config.json $(VENV)/etc/jupyter/
	@cp tools/jupyterlab/ipython_kernel_config.json $(VENV)/etc/ipython/
	@touch $@

# The tests' and tools' packages on top (requirements-dev.lock has no torch: requirements.lock has it).
$(DEV_STAMP): $(STAMP) requirements-dev.lock
	@echo "Installing the tests' and tools' pinned packages into $(VENV)..."
	@{ $(BIN)/pip install --quiet --no-compile $(UV_PIN) $(QUIET_PIP) \
	   && $(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -r requirements-dev.lock; } \
	  || { echo "uv could not install requirements-dev.lock; pip installs it instead"; \
	       $(BIN)/pip install --quiet --no-compile -r requirements-dev.lock $(QUIET_PIP); }
	@touch $@

# A learner's own copy: the notebooks without their solutions, in $(LEARNER)/ (not part of the repository).
# It is brought up to date on every start, except the notebooks the learner has changed, which are never
# overwritten (tools/student_edition.py says which it kept).
lab: $(STAMP)
	@$(BIN)/python -m tools.student_edition --lab --out $(LEARNER)
	@$(BIN)/jupyter lab --ip=127.0.0.1 --ServerApp.root_dir=$(LEARNER) \
	  --LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb $(ROOT_FLAG) $(LAB_EXTRA)

# The teacher's edition, the stored notebooks themselves: each solution sits, collapsed, under its exercise.
teach: $(STAMP)
	@$(BIN)/jupyter lab --ip=127.0.0.1 --ServerApp.root_dir=. \
	  --LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb $(ROOT_FLAG) $(LAB_EXTRA)

# The browser tests need a Chromium: Playwright's own, or chromium / chromium-browser / google-chrome on the
# PATH. Only as root on Debian or Ubuntu is a missing one installed (apt-get); elsewhere this stops with
# one line that says what to run.
browser: $(DEV_STAMP)
	@$(BIN)/python tests/find_browser.py --install > /dev/null

# The site and the slides load reveal.js, MathJax, require.js and the widget renderer
# from local copies: npm installs them from the lock file.
WEB := tools/web/node_modules/.installed
$(WEB): tools/web/package.json tools/web/package-lock.json
	@command -v npm > /dev/null || { echo "make site, make slides and make test need Node.js and npm (https://nodejs.org/): install them, then run make again"; exit 1; }
	@cd tools/web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Everything `make test` needs: the venv and the site's JavaScript at the same time (pip works on one core,
# npm mostly waits on the network), then a browser.
setup:
	@$(MAKE) --no-print-directory -j2 $(DEV_STAMP) $(WEB)
	@$(MAKE) --no-print-directory browser

# The inner loop: the linter, then every test that starts no server, browser, kernel or fresh environment.
# The contract fuzz draws a quarter of its examples here (tests/test_contract.py), `make test` half, `make fuzz` 20 times.
check: $(DEV_STAMP)
	$(BIN)/ruff check .
	POSENC_FUZZ_SCALE=0.25 $(BIN)/python -m pytest -n auto -m "not slow" tests

# The wider random hunt: `make check`'s tests, with new Hypothesis examples on every run (`make check` and `make test`
# draw a fixed set: tests/conftest.py) and POSENC_FUZZ_SCALE times the contract fuzz's examples. A failure prints the
# seed and Hypothesis's @reproduce_failure line; `make fuzz FUZZ_SEED=n` draws that run again. Add what it finds to
# FOUND_BY_THE_FUZZ in tests/test_contract.py (the fixed test then tries it on every run) before fixing it.
POSENC_FUZZ_SCALE ?= 20
ifndef FUZZ_SEED
FUZZ_SEED := $(shell $(PYTHON) -c "import random; print(random.randrange(2**32))")
endif
fuzz: $(DEV_STAMP)
	@echo "make fuzz: seed $(FUZZ_SEED), $(POSENC_FUZZ_SCALE) x the contract's examples (again: make fuzz FUZZ_SEED=$(FUZZ_SEED))"
	POSENC_HYPOTHESIS_PROFILE=fuzz POSENC_FUZZ_SCALE=$(POSENC_FUZZ_SCALE) $(BIN)/python -m pytest -n auto -m "not slow" \
	  -p no:cacheprovider --hypothesis-seed=$(FUZZ_SEED) tests \
	  || { echo "make fuzz: seed $(FUZZ_SEED) found a failure: make fuzz FUZZ_SEED=$(FUZZ_SEED) draws it again"; exit 1; }

# Every test on every core (pytest-xdist; tests/notebook_runs.py says how the work is grouped and ordered), with one worker
# more than there are cores: the browser tests spend much of their time waiting on Chromium, and the extra
# worker's tests fill those waits (on 2 cores the machine went from 93% to 98% busy).
WORKERS ?= $(shell $(PYTHON) -c "import os; print((os.cpu_count() or 1) + 1)")
PYTEST_EXTRA ?=
# nbval runs each notebook as stored, under this machine's CPU (--this-cpu-only); the second run of each, its learner's
# edition under the oldest CPU, is `make test-oldest-cpu`.
test: setup
	$(BIN)/ruff check .
	POSENC_FUZZ_SCALE=0.25 $(BIN)/python -m pytest -n $(WORKERS) --this-cpu-only $(PYTEST_EXTRA)

# Each notebook's learner's edition (solutions removed, every exercise not attempted) under the oldest CPU the stored
# outputs must hold on (tests/notebook_runs.py writes the copies into this folder, then nbval runs them): about
# 300 CPU-seconds, so a target of its own, which CI runs after `make test` (.ci/run).
test-oldest-cpu: setup
	$(BIN)/python -m pytest -n $(WORKERS) build/learners-edition/notebooks $(PYTEST_EXTRA)

# docs/developing.md's setup without make, line by line in a fresh venv (tests/test_setup_without_make.py): pip unpacks
# the learner's 1.2 GB lock again, about 3 minutes of one core, so it is a target of its own, which CI runs after
# `make test` (.ci/run).
test-setup: $(DEV_STAMP)
	POSENC_README_SETUP=1 $(BIN)/python -m pytest tests/test_setup_without_make.py

# A teacher changes the running example (src/posenc/example.py), runs `make notebooks` for 00-08, and every test but
# those marked original_example passes in that copy (tests/test_teacher_changes_the_example.py): about 7 minutes, so a
# target of its own, which CI runs after `make test` (.ci/run).
test-teacher: setup
	POSENC_TEACHER_TEST=1 $(BIN)/python -m pytest tests/test_teacher_changes_the_example.py

# images/ first (its front-page pipeline shows the running example), then the notebooks.
# Solutions are collapsed under their exercises (tools/run_notebooks.py), as every run writes them. A notebook whose
# solution its checker does not call correct, or with a cell that raises, is not written, and make fails naming it
# and the exercise. `make notebooks NOTEBOOK=03` (or NOTEBOOK="03 05") re-executes only those.
notebooks: $(STAMP)
	$(BIN)/python -m tools.install_cell
	$(BIN)/python -m tools.draw_images images
	$(BIN)/python -m tools.run_notebooks $(or $(NOTEBOOK),notebooks/*.ipynb)

student: $(STAMP)
	$(BIN)/python -m tools.student_edition

# A graded week (docs/teaching.md): notebook NN's exercises as an otter-grader assignment, a student notebook to hand out and
# an autograder zip (tools/assignment.py); then the collected notebooks graded on this machine, without Docker, into
# one CSV (tools/grade.py; NOTEBOOK= only if the submissions do not say which assignment they are). otter is one of
# the tools in requirements-dev.lock.
assignment: $(DEV_STAMP)
	@test -n "$(NOTEBOOK)" || { echo "make assignment NOTEBOOK=NN: say which notebook, e.g. NOTEBOOK=03"; exit 1; }
	$(BIN)/python -m tools.assignment $(NOTEBOOK)

grade: $(DEV_STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "make grade SUBMISSIONS=folder: say which folder holds the notebooks"; exit 1; }
	$(BIN)/python -m tools.grade $(SUBMISSIONS) $(if $(NOTEBOOK),--notebook $(NOTEBOOK))

slides: $(STAMP) $(WEB)
	$(BIN)/python -m tools.build_site slides

# Built after the slides, so the index links each notebook to its deck. Two sites: the teacher's, build/site/
# (solutions behind their toggles, slides), and the students', build/site-students/ (the learner's edition: no
# solutions, the learner's notebooks to download; tools/build_site.py).
site: slides
	$(BIN)/python -m tools.build_site site

images: $(STAMP)
	$(BIN)/python -m tools.draw_images images

bench: $(DEV_STAMP)
	$(BIN)/python benchmarks/bench_encoding.py
	$(BIN)/python benchmarks/bench_explorer_latency.py
	$(BIN)/python benchmarks/bench_stretching.py
	$(BIN)/python benchmarks/bench_previous_token.py
	# A class of 60 generated submissions of 03, graded as make grade grades them (about 10 minutes).
	$(BIN)/python benchmarks/bench_grading.py
	# "Stretching the context" and "What real models set" print the saved seeds' results: re-run them on the new ones.
	$(BIN)/python -m tools.run_notebooks notebooks/16_stretching_context.ipynb notebooks/17_what_real_models_set.ipynb
	# `make test` from a fresh clone of HEAD, timed, with its parts (about 10 minutes).
	$(BIN)/python benchmarks/make_test_time.py

# Resolve requirements.in, then requirements-dev.in, with uv, for the Python that runs make. uv keeps the versions
# already in the locks wherever the requirements allow them (`make lock UPGRADE=1` takes the newest instead).
# requirements-dev.lock lists only what requirements-dev.in adds (its resolution is held to requirements.lock).
# torch is resolved as its CPU build (where pip finds it: PyTorch's CPU index or pip's local wheel folders,
# PIP_FIND_LINKS) and written without the "+cpu" label (see TORCH_CPU_INDEX above).
LOCK_TMP := .lock-tmp
LOCK_SOURCES = $(if $(TORCH_CPU_INDEX),$(TORCH_CPU_INDEX) --index-strategy unsafe-best-match) \
  $(addprefix --find-links ,$(PIP_FIND_LINKS))
UV_COMPILE = $(BIN)/uv pip compile --quiet --python $(PYTHON) --no-header --no-annotate --no-emit-package posenc \
  $(LOCK_SOURCES) $(if $(UPGRADE),--upgrade)
CPU_LABEL := sed -E 's/^torch==([0-9.]+)$$/torch==\1+cpu/'
NO_CPU_LABEL := sed -E 's/^torch==([0-9.]+)\+cpu$$/torch==\1/'
lock: $(DEV_STAMP)
	rm -rf $(LOCK_TMP) && mkdir $(LOCK_TMP)
	$(CPU_LABEL) requirements.lock > $(LOCK_TMP)/learner.txt
	$(UV_COMPILE) requirements.in -o $(LOCK_TMP)/learner.txt
	{ echo "# Generated by \`make lock\` from requirements.in: do not edit by hand."; \
	  $(NO_CPU_LABEL) $(LOCK_TMP)/learner.txt; } > requirements.lock
	cat requirements.lock requirements-dev.lock | $(CPU_LABEL) > $(LOCK_TMP)/dev.txt
	$(UV_COMPILE) requirements-dev.in -o $(LOCK_TMP)/dev.txt
	{ echo "# Generated by \`make lock\` from requirements-dev.in, less requirements.lock: do not edit by hand."; \
	  $(NO_CPU_LABEL) $(LOCK_TMP)/dev.txt | grep -vxFf requirements.lock; } > requirements-dev.lock
	! grep -E '^(nvidia-|triton==)' requirements.lock requirements-dev.lock \
	  || { echo "make lock: CUDA packages in the lock (torch's CPU wheel was not found)"; exit 1; }
	$(BIN)/python -m tools.sync_environment
	rm -rf $(LOCK_TMP)

clean:
	rm -rf $(VENV) .pytest_cache $(LOCK_TMP) build test-artifacts tools/web/node_modules
	@test ! -d $(LEARNER) || echo "$(LEARNER)/ is your own work: not removed"
