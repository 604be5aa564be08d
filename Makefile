# quadriga: `make demo` runs the main job, `make test` runs the whole test suite.
# Both create .venv and install the core and every plugin in plugins/ with constraints.txt.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PLUGIN_DIRS := $(patsubst %/pyproject.toml,%,$(wildcard plugins/*/pyproject.toml))
STAMP  := $(VENV)/.installed

.PHONY: venv demo test bench docs clean

$(STAMP): pyproject.toml constraints.txt $(wildcard plugins/*/pyproject.toml)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test,docs,ray]" $(addprefix -e ,$(PLUGIN_DIRS))
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/quadriga run cartpole-minto

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

docs: $(STAMP)
	$(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) runs verify sweeps site
