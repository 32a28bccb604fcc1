# posenc: two commands on a fresh machine.
#   make lab    set up .venv from requirements.lock and open JupyterLab on the suite
#   make test   set up the same way and run every test, the notebooks (nbval) included
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
# This machine's pip lists local wheel folders that hold only some packages; its
# warnings about the others are noise.
QUIET_PIP := 2>&1 | { grep -v 'is ignored: it is neither a file nor a directory' || true; }
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Extra flags for `make lab`; the tests pass --no-browser, a port and a token here.
LAB_EXTRA ?=
# Jupyter refuses to run as root unless told; containers and CI often are root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: lab test browser notebooks student images site slides lock bench clean help
help:
	@echo "make lab        open JupyterLab on the suite (sets up .venv first)"
	@echo "make test       run every test, nbval and the browser tests included"
	@echo "make notebooks  re-execute every notebook in place (the stored outputs)"
	@echo "make student    write the learner's edition (solutions removed) to build/student/"
	@echo "make images     redraw images/ from the package"
	@echo "make slides     reveal.js slides of every notebook, offline, in build/site/slides/"
	@echo "make site       an offline HTML site of every notebook in build/site/ (open index.html)"
	@echo "make bench      run the benchmarks, results in benchmarks/results/"
	@echo "make lock       re-resolve requirements.in into requirements.lock and environment.yml"

# The lock pins torch==2.13.0 without the "+cpu" label, so that macOS and Windows (whose wheels have no
# label) can install it. On Linux, PyPI's 2.13.0 is the CUDA build with gigabytes of CUDA packages; PyTorch's
# own index has 2.13.0+cpu, which pip prefers when it can see it. Ask that index only when it answers:
# a machine that cannot reach it (like this project's CI, whose pip has the CPU wheel locally) would
# otherwise wait on it for every package.
TORCH_CPU_INDEX = $(shell $(PYTHON) -c "import socket; socket.create_connection(('download.pytorch.org', 443), timeout=3)" \
  2>/dev/null && echo --extra-index-url https://download.pytorch.org/whl/cpu)

# The venv is rebuilt when the lock or the package metadata changes. pip byte-compiles every module on one core,
# which takes longer than the install itself; compileall on every core does the same (measured: 70 s in all, against
# 32 s + 17 s). The .pyc files must exist: with PYTHONDONTWRITEBYTECODE set, as on this project's machines, Python
# would otherwise compile every module again in every process. compileall's exit code is ignored as pip ignores
# its own compile errors (a few packages ship files for other Python versions).
# JupyterLab's defaults for the suite (no news pop-up) go where a plain `pip install .` puts them; an editable
# install skips data files, so they are copied here.
LAB_DEFAULTS := $(VENV)/share/jupyter/lab/settings/overrides.d
$(STAMP): requirements.lock pyproject.toml tools/jupyterlab/posenc.json
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --no-compile -r requirements.lock $(TORCH_CPU_INDEX) $(QUIET_PIP)
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e . $(QUIET_PIP)
	mkdir -p $(LAB_DEFAULTS) && cp tools/jupyterlab/posenc.json $(LAB_DEFAULTS)/
	@touch $@

lab: $(STAMP)
	$(BIN)/jupyter lab --ip=127.0.0.1 --ServerApp.root_dir=. \
	  --LabApp.default_url=/lab/tree/notebooks/00_start_here.ipynb $(ROOT_FLAG) $(LAB_EXTRA)

# The browser tests need a Chromium: Playwright's own, or chromium / chromium-browser / google-chrome on the
# PATH. Only as root on Debian or Ubuntu is a missing one installed (apt-get); elsewhere this stops with
# one line that says what to run.
browser: $(STAMP)
	@$(BIN)/python tools/find_browser.py --install > /dev/null

# The site and the slides load reveal.js, MathJax, require.js and the widget renderer
# from local copies: npm installs them from the lock file.
WEB := tools/web/node_modules/.installed
$(WEB): tools/web/package.json tools/web/package-lock.json
	cd tools/web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

test: $(STAMP) browser $(WEB)
	$(BIN)/python -m pytest

notebooks: $(STAMP)
	$(BIN)/python tools/install_cell.py
	$(BIN)/python tools/run_notebooks.py notebooks/*.ipynb

student: $(STAMP)
	$(BIN)/python tools/student_edition.py

slides: $(STAMP) $(WEB)
	$(BIN)/python tools/build_site.py slides

# Built after the slides, so the index links each notebook to its deck.
site: slides
	$(BIN)/python tools/build_site.py site

images: $(STAMP)
	$(BIN)/python tools/draw_images.py images

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_encoding.py
	$(BIN)/python benchmarks/widget_latency.py
	$(BIN)/python benchmarks/browser_latency.py
	# The precision notebook prints the committed results: re-run it on the new ones.
	$(BIN)/python tools/run_notebooks.py notebooks/12_precision.ipynb

# Resolve the loose requirements in a throwaway venv and freeze what pip chose.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet -r requirements.in $(QUIET_PIP)
	{ echo "# Generated by \`make lock\` from requirements.in: do not edit by hand."; \
	  .lock-venv/bin/pip freeze --all --exclude pip --exclude posenc | sed -E 's/^torch==([0-9.]+)\+cpu$$/torch==\1/'; \
	} > requirements.lock
	.lock-venv/bin/python tools/sync_environment.py
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) .pytest_cache .lock-venv build test-artifacts tools/web/node_modules
