# Two commands for a fresh machine: `make run` and `make test`. Both build .venv first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint web-check web-types bench clean

# The web client (web/): npm ci when the lock changes, vite build when a source is newer.
WEB_DEPS := web/node_modules/.installed
# The TypeScript SDK (clients/typescript/): npm ci when its lock changes; its AsyncAPI parser
# checks the sockets' document in the tests.
SDK_TS_DEPS := clients/typescript/node_modules/.installed
WEB_BUILD := web/dist/index.html
WEB_SRC := $(shell find web/src web/public clients/typescript/src -type f 2>/dev/null) web/index.html web/vite.config.ts web/tsconfig.json web/tsconfig.sw.json

# The server, and the Python SDK (clients/python) beside it: its tests play against the server.
$(STAMP): pyproject.toml clients/python/pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]' -e './clients/python[webhooks]'
	touch $(STAMP)

$(WEB_DEPS): web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(SDK_TS_DEPS): clients/typescript/package.json clients/typescript/package-lock.json
	cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The web client takes the TypeScript SDK from its sources (web/tsconfig.json's paths), with
# the SDK's own dependencies.
$(WEB_BUILD): $(WEB_DEPS) $(SDK_TS_DEPS) $(WEB_SRC)
	cd web && npx vite build --logLevel warn

# Types, then no import cycle under web/src (madge exits 1 naming each circle).
web-check: $(WEB_DEPS) $(SDK_TS_DEPS)
	cd web && npx tsc --noEmit && npx tsc --noEmit -p tsconfig.sw.json
	cd web && npx madge --circular --extensions ts,tsx --ts-config tsconfig.json src

# After an API change: regenerate the SDK's types (clients/typescript/src/generated/, which
# the web client imports too) from the server's schemas.
web-types: $(STAMP) $(SDK_TS_DEPS)
	$(BIN)/python -m scripts.web_schemas
	cd clients/typescript && npm run --silent types

run: $(STAMP) $(WEB_BUILD)
	$(BIN)/python -m app

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint web-check $(WEB_BUILD) $(SDK_TS_DEPS)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache web/node_modules web/dist
