# One entry point for newcomers, developers and CI. `make demo` and `make test`
# set everything up on a fresh machine (Python 3.11+, Node 20+, npm, git).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
export CDK_DISABLE_CLI_TELEMETRY := true

.PHONY: setup demo test unit integration infra e2e lint synth diff deploy bootstrap config openapi check bench clean focus-validate browser screenshots dashboard-demo

$(STAMP): pyproject.toml requirements/dev.lock package-lock.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check uv==0.13.9
	$(BIN)/uv pip install --python $(BIN)/python --quiet --compile-bytecode -r requirements/dev.lock
	$(BIN)/uv pip install --python $(BIN)/python --quiet --no-deps -e .
	$(BIN)/python -m compileall -q shared functions costtracker cdk
	npm ci --silent --no-audit --no-fund
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/costtracker demo

test: setup
	$(BIN)/pytest -q -n 2 --dist loadfile tests

unit: setup
	$(BIN)/pytest -q tests/unit

integration: setup
	$(BIN)/pytest -q tests/integration

infra: setup
	$(BIN)/pytest -q tests/infra

e2e: setup
	$(BIN)/pytest -q -m e2e tests/e2e

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check shared functions costtracker
	$(BIN)/mypy

# The CDK CLI pinned in package-lock.json, with the project's venv first on PATH
# (cdk.json's app is `.venv/bin/python cdk/app.py`). Extra CLI arguments go in ARGS,
# e.g. make deploy ARGS='-c account=111122223333 -c region=us-east-1'.
CDK := PATH=$(CURDIR)/$(BIN):$$PATH npx --no-install cdk
ARGS ?=

synth: setup
	$(CDK) synth --quiet $(ARGS)
	$(BIN)/cfn-lint --ignore-checks W3005 -- cdk.out/*.template.json

diff: setup
	$(CDK) diff $(ARGS)

deploy: setup
	$(CDK) deploy $(ARGS)

bootstrap: setup
	$(CDK) bootstrap $(ARGS)

config: setup
	$(BIN)/costtracker config show $(ARGS)

browser: setup
	$(BIN)/pytest -q tests/browser

screenshots: setup
	COSTTRACKER_SCREENSHOTS=docs/dashboard $(BIN)/pytest -q tests/browser

dashboard-demo: setup
	$(BIN)/costtracker demo --scenario costtracker/examples/two-teams-fortnight.json \
		--budgets costtracker/examples/two-teams-fortnight.budgets.json

openapi: setup
	$(BIN)/python -m costtracker.openapi > docs/openapi.json

bench: setup
	$(BIN)/python -m bench
	$(BIN)/python -m bench.docs_page

check: lint test synth

# Opt-in (not in CI): the FinOps Foundation's validator on the examples' daily Parquet files
# (seoul-fsx-month-end: Seoul finance days with FSx rows, split at the UTC month end).
# Needs ../shared/tools/focus-validator.sh (first run builds a Debian chroot, ~2.5 min, root).
FOCUS_VALIDATOR ?= ../shared/tools/focus-validator.sh
FOCUS_EXAMPLES ?= llama-lora-vs-p5 seoul-fsx-month-end
focus-validate: setup
	rm -rf .focus-check
	set -e; for x in $(FOCUS_EXAMPLES); do \
	  $(BIN)/costtracker replay costtracker/examples/$$x.json --json --focus-dir .focus-check/$$x > /dev/null; \
	done
	set -e; for f in .focus-check/*/focus/*/*/*/focus-1.2.parquet; do \
	  for try in 1 2 3; do \
	    rc=0; out=$$($(FOCUS_VALIDATOR) $$f) || rc=$$?; \
	    [ $$rc -eq 2 ] || break; \
	  done; \
	  echo "$$f: $$(printf '%s\n' "$$out" | grep -E '^Total:') / $$(printf '%s\n' "$$out" | tail -1)"; \
	  [ $$rc -eq 0 ]; \
	done

clean:
	rm -rf $(VENV) node_modules cdk.out .focus-check
