# quadriga: `make demo` runs the main job, `make test` runs the whole test suite,
# `make lint typecheck test docs` is what CI runs (.ci/run).
# Every target creates .venv and installs the core (with its test, docs, ray, slurm and dev extras) and every
# plugin in plugins/ with constraints.txt; nothing else is downloaded.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PLUGIN_DIRS := $(patsubst %/pyproject.toml,%,$(wildcard plugins/*/pyproject.toml))
STAMP  := $(VENV)/.installed

.PHONY: venv demo test bench lint format typecheck docs pre-commit clean

$(STAMP): pyproject.toml constraints.txt $(wildcard plugins/*/pyproject.toml)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test,docs,ray,slurm,dev]" $(addprefix -e ,$(PLUGIN_DIRS))
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/quadriga run cartpole-minto
	@echo
	@echo "What ran: DQN, DQN without a target network and MINTO on CartPole-v1, 2 seeds"
	@echo "each (paired), 6000 environment steps per run. The tables above give each"
	@echo "arm's mean over its seeds; with n = 2 these are numbers, not a verdict. The"
	@echo "paper's claim is about Acrobot-v1, not this CartPole demo: 'quadriga verify"
	@echo "minto-auc --scale paper' tests it there (10 seeds per learner; about 7 minutes"
	@echo "on an idle 2-core machine, 23 on a loaded one; its last verdict is in"
	@echo "plugins/quadriga-minto/README.md). Figures, results.json and manifest.json are"
	@echo "in the run directory printed above; 'quadriga report RUN_DIR' writes them into"
	@echo "one HTML page. The warnings that dqn-online's loss grew about 1000-fold are"
	@echo "expected: without a target network its TD loss diverges, the instability"
	@echo "MINTO's min(target, online) bootstrap addresses."

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

# ruff: the rules in pyproject.toml [tool.ruff.lint]; the formatter must leave every file unchanged
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# rewrite files: the fixes ruff can make safely, then the formatter
format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# mypy on the core package (configuration: pyproject.toml [tool.mypy])
typecheck: $(STAMP)
	$(BIN)/mypy

docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# install the git hooks of .pre-commit-config.yaml (they run the tools of .venv)
pre-commit: $(STAMP)
	$(BIN)/pre-commit install

# removes what make built (.venv, the docs site); results in runs/, verify/ and sweeps/ are kept
clean:
	rm -rf $(VENV) site
