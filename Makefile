# stree: everything from a fresh machine with only python3 and node/npm.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PI     := tests/pi/node_modules/@mariozechner/pi-coding-agent/package.json

.PHONY: run test soak install clean

run: $(VENV)/.installed
	@$(BIN)/stree --no-pager -s demo log --graph

test: $(VENV)/.installed-test $(PI)
	$(BIN)/python -m pytest -q

# the long fuzz / fault-injection runs (pytest marker `soak`, left out of `make test`)
soak: $(VENV)/.installed-test $(PI)
	$(BIN)/python -m pytest -q -s -m soak

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@touch $@

$(VENV)/.installed: $(VENV)/.created pyproject.toml
	$(BIN)/python -m pip install -q -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.created pyproject.toml
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@ $(VENV)/.installed

# the real pi, for the interop tests (pinned in tests/pi/package-lock.json)
$(PI): tests/pi/package.json tests/pi/package-lock.json
	npm ci --prefix tests/pi --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

install: $(VENV)/.installed

clean:
	rm -rf $(VENV) tests/pi/node_modules .pytest_cache
