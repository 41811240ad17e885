# stree: everything from a fresh machine with only python3 and node/npm.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PI     := tests/pi/node_modules/@mariozechner/pi-coding-agent/package.json
# Node 22 and pi 0.87.1 / 1.5.2 (tarballs pinned in tests/pi/pins.json), for the interop matrix
PIS    := tests/pi/.installed-pins
# oh-my-pi on Bun, for `make bench` only
PEERS  := tools/bench/peers/node_modules/@oh-my-pi/pi-coding-agent/package.json
# where `make install` puts the command, the man pages and the completion scripts (no root needed)
PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASH_COMPLETION_DIR ?= $(or $(XDG_DATA_HOME),$(PREFIX)/share)/bash-completion/completions
ZSH_COMPLETION_DIR  ?= $(HOME)/.zfunc
# the system packages some tests drive, one TOOL:PACKAGE a word (add more here): zsh for the
# completion tests, groff and man for the man pages, chromium for the HTML export.
# `make test` installs the missing ones with apt-get only when STREE_TEST_APT=1 asks for it
# (CI sets it in .ci/run); it waits up to 10 minutes for another apt/dpkg to let go of its lock.
SHELL_TOOLS := zsh:zsh groff:groff-base man:man-db chromium:chromium pg_ctlcluster:postgresql
# the bench's system peers, the same way (`make bench` installs the missing ones when STREE_TEST_APT=1,
# as root): ripgrep for warm grep (tools/bench/grep.py; without it its rows say so)
BENCH_TOOLS := rg:ripgrep
APT_GET := DEBIAN_FRONTEND=noninteractive apt-get -q -y -o DPkg::Lock::Timeout=600

.PHONY: run test check test-latest soak install install-bin install-man install-completions man complete-table completions shell-tools bench-tools clean bench bench-team

run: $(VENV)/.installed
	@$(BIN)/stree --no-pager -s demo log --graph

# the layer contracts first (import-linter, [tool.importlinter] in pyproject.toml), dead code
# (vulture; what only click, pytest or a server calls by name: tools/vulture_allow.py), then the tests
VULTURE := $(BIN)/vulture stree tools tests tools/vulture_allow.py --min-confidence 60 --exclude "*tests/pi/*,*tools/bench/peers/*,*/node_modules/*"

# the tests run in TEST_JOBS processes (pytest-xdist; `auto`: one per core; `make test TEST_JOBS=0`
# runs them in this one process, in order)
TEST_JOBS ?= auto

test: $(VENV)/.installed-test $(PI) $(PIS) shell-tools
	$(BIN)/lint-imports
	$(VULTURE)
	$(BIN)/python -m pytest -q -rs -n $(TEST_JOBS)

# the edit-test loop: the layer contracts, then tests/unit and tests/cli without what needs Node,
# a browser or a shell, is slow, or starts a program itself (markers applied by tests/conftest.py
# by what each test uses; the `stree` fixture runs stree in the test's process)
check: $(VENV)/.installed-test
	$(BIN)/lint-imports
	$(VULTURE)
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) tests/unit tests/cli -m "not (pi or browser or shell or slow or soak or process)"

# a watch on the next pi (not part of `make test`): npm's newest pi unpacked in tests/pi/latest/,
# a report of where it and the reference differ (per area), then the interop matrix with it added
test-latest: $(VENV)/.installed-test $(PI) $(PIS)
	$(BIN)/python tests/pi/latest.py

# the long fuzz / fault-injection runs (pytest marker `soak`, left out of `make test`)
soak: $(VENV)/.installed-test $(PI) $(PIS)
	$(BIN)/python -m pytest -q -s -m soak --timeout=0

# the $(SHELL_TOOLS) missing here: installed when STREE_TEST_APT=1 (as root, with apt-get);
# otherwise their tests are skipped, and this says which and why. apt-get's own output goes to
# a temporary log; a failure is one line naming the package and apt's last error.
shell-tools:
	@$(MAKE) -s apt-tools TOOLS="$(SHELL_TOOLS)" FOR="the tests that need"

bench-tools:
	@$(MAKE) -s apt-tools TOOLS="$(BENCH_TOOLS)" FOR="the bench rows that need"

apt-tools:
	@log=$$(mktemp); for need in $(TOOLS); do \
		tool=$${need%%:*}; pkg=$${need#*:}; \
		command -v $$tool >/dev/null && continue; \
		if [ "$${STREE_TEST_APT:-0}" != 1 ]; then \
			echo "make: $$tool is not installed: $(FOR) it are skipped (STREE_TEST_APT=1 installs $$pkg with apt-get, as root)"; \
		elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
			echo "make: STREE_TEST_APT=1 asks to install $$pkg, which needs root and apt-get: $(FOR) $$tool are skipped"; \
		else \
			$(APT_GET) install $$pkg >$$log 2>&1 || \
				{ $(APT_GET) update >>$$log 2>&1 && $(APT_GET) install $$pkg >>$$log 2>&1; } || \
				echo "make: could not install $$pkg ($$(grep '^E:' $$log | tail -n 1)): $(FOR) $$tool are skipped"; \
		fi; \
	done; rm -f $$log

# man/*.1 from the click definitions; completions/ from the scripts stree prints
man: $(VENV)/.installed
	$(BIN)/python tools/gen_man.py man

# stree/data/complete_table.json (what `stree __complete` reads) and stree/argv_table.py (what the fast
# paths read a command line with: stree.argv) from the click definitions
complete-table: $(VENV)/.installed
	$(BIN)/python tools/gen_complete_table.py

completions: $(VENV)/.installed
	$(BIN)/stree completion bash > completions/stree.bash
	$(BIN)/stree completion zsh > completions/_stree

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@touch $@

# editable_mode=compat: the checkout goes on sys.path through a .pth line, with no import
# hook to load at every start (the default hook costs ~13 ms a process: stree starts as
# fast as from a regular install)
EDITABLE := --config-settings editable_mode=compat

$(VENV)/.installed: $(VENV)/.created pyproject.toml Makefile
	$(BIN)/python -m pip install -q -e . $(EDITABLE)
	@touch $@

$(VENV)/.installed-test: $(VENV)/.created pyproject.toml Makefile
	$(BIN)/python -m pip install -q -e '.[test]' $(EDITABLE)
	@touch $@ $(VENV)/.installed

# the real pi, for the interop tests (pinned in tests/pi/package-lock.json)
$(PI): tests/pi/package.json tests/pi/package-lock.json
	npm ci --prefix tests/pi --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

# the other pis and Node 22: npm pack of each pinned tarball, its sha512 checked, unpacked
# into tests/pi/node22 and tests/pi/versions/VERSION (idempotent, no root)
$(PIS): tests/pi/pins.json tests/pi/install.py
	$(PYTHON) tests/pi/install.py
	@touch $@

# the command: a link to the checkout's .venv/bin/stree (keep the checkout), on $(BINDIR)
install: $(VENV)/.installed install-bin install-man install-completions
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) \
		echo "make: $(BINDIR) is not on your PATH; add it, e.g.: echo 'export PATH=\"$(BINDIR):\$$PATH\"' >> ~/.profile";; \
	esac

install-bin: $(VENV)/.installed
	install -d $(DESTDIR)$(BINDIR)
	ln -sf $(abspath $(BIN))/stree $(DESTDIR)$(BINDIR)/stree

install-man:
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1/

# bash-completion loads ~/.local/share/bash-completion/completions/stree on first use;
# zsh needs ~/.zfunc in $$fpath before compinit (see README)
install-completions:
	install -d $(DESTDIR)$(BASH_COMPLETION_DIR) $(DESTDIR)$(ZSH_COMPLETION_DIR)
	install -m 644 completions/stree.bash $(DESTDIR)$(BASH_COMPLETION_DIR)/stree
	install -m 644 completions/_stree $(DESTDIR)$(ZSH_COMPLETION_DIR)/_stree

# timings against python/click, a plain json.loads loop, pi 1.6.0 (Node 22) and oh-my-pi (Bun),
# at 1k to 1M entries (~800 MB generated into bench/data; BENCH_MAX=100k stops there), the catalogue
# (first build; PostgreSQL push and grep against SQLite; stats --all against ccusage and the first ls --all
# against pi's listAll), warm grep against ripgrep, the export page against pi's -> bench/results.md
bench: $(VENV)/.installed-fast $(PI) $(PIS) $(PEERS) bench-tools
	$(BIN)/python tools/bench/run.py
	$(BIN)/python tools/bench/serve.py >> bench/results.md
	$(BIN)/python tools/bench/catalog.py > bench/.catalog.md
	$(BIN)/python tools/bench/grep.py >> bench/.catalog.md
	$(BIN)/python tools/bench/catalog_build.py >> bench/.catalog.md
	$(BIN)/python tools/bench/stats_all.py >> bench/.catalog.md
	$(BIN)/python tools/bench/catalog_pg.py >> bench/.catalog.md
	cat bench/.catalog.md >> bench/results.md && cat bench/.catalog.md && rm bench/.catalog.md
	$(BIN)/python tools/bench/export_page.py 20000 --runs 3 | tee -a bench/results.md

# the shared catalogue at team scale, by simulation (issue 29): 20 hosts x 500 sessions pushed at once
# to a throwaway PostgreSQL, then grep and stats --all as a reader (~15 min on 2 cores) -> bench/results.md
bench-team: $(VENV)/.installed-fast
	$(BIN)/python tools/bench/team_sim.py | tee -a bench/results.md

# stree with the `fast` extra (msgspec), as the bench measures it
$(VENV)/.installed-fast: $(VENV)/.installed
	$(BIN)/python -m pip install -q -e '.[fast]' $(EDITABLE)
	@touch $@

# the bench's peers: oh-my-pi, Bun and ccusage from npm (pinned in tools/bench/peers/package-lock.json);
# Bun's own install script is not run: its binary comes in the @oven/bun-<platform> package.
# `npm install --no-save` installs the lock's versions: `npm ci` refuses a lock without the
# optional native packages of other platforms (oh-my-pi's pi-natives-*) it could not resolve
$(PEERS): tools/bench/peers/package.json tools/bench/peers/package-lock.json
	npm install --prefix tools/bench/peers --ignore-scripts --no-audit --no-fund --no-save --loglevel=error
	@touch $@

clean:
	rm -rf $(VENV) tests/pi/node_modules tests/pi/node22 tests/pi/versions $(PIS) .pytest_cache tools/bench/peers/node_modules
