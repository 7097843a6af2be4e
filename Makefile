# Two entry points for a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
NODE_DIR := src/assay/sandbox/node
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint bench node-deps clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

node-deps:
	@if [ -f $(NODE_DIR)/package.json ]; then \
	  if ! command -v node >/dev/null; then echo "node not found: Node.js code evaluators will be unavailable"; \
	  elif [ ! -d $(NODE_DIR)/node_modules ] || [ $(NODE_DIR)/package.json -nt $(NODE_DIR)/node_modules ]; then \
	    (cd $(NODE_DIR) && npm install --omit=dev --no-audit --no-fund --no-package-lock --loglevel=error) && touch $(NODE_DIR)/node_modules; \
	  fi; \
	fi

setup: $(STAMP) node-deps

# The example suite has failing samples on purpose: exit 1 (some failed) is a good demo.
demo: setup
	$(BIN)/assay run examples/presets/eval.yaml; status=$$?; [ $$status -le 1 ]
	$(BIN)/assay run examples/json-schema/eval.yaml; status=$$?; [ $$status -le 1 ]

lint: setup
	$(BIN)/ruff check src tests bench

test: setup lint
	$(BIN)/python -m pytest

bench: setup
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) $(NODE_DIR)/node_modules
