"""before-tree / tree hooks: executables that see a checkout, git-hook style.

They live in `hooks/` under stree's config dir (platformdirs), or in
$STREE_HOOKS_DIR. A hook gets JSON on stdin; `before-tree` may answer JSON on
stdout. Each runs in its own process group and is killed after a timeout
(default 30 s, $STREE_HOOK_TIMEOUT).
"""

import json
import os
import sys
from pathlib import Path

from ..errors import CONFLICT, StreeError

DEFAULT_TIMEOUT = 30.0
BEFORE_TREE = "before-tree"
TREE = "tree"


def hooks_dir():
    override = os.environ.get("STREE_HOOKS_DIR")
    if override:
        return Path(os.path.expanduser(override))
    if sys.platform.startswith("linux"):  # platformdirs' rule where it is plain, without importing it
        base, home = os.environ.get("XDG_CONFIG_HOME", ""), os.environ.get("HOME", "")
        if os.path.isabs(base):
            return Path(base) / "stree" / "hooks"
        if not base and os.path.isabs(home):
            return Path(home) / ".config" / "stree" / "hooks"
    import platformdirs

    return Path(platformdirs.user_config_dir("stree")) / "hooks"


def timeout():
    from ..errors import env_seconds

    return env_seconds("STREE_HOOK_TIMEOUT", DEFAULT_TIMEOUT)


KEYS_OPT_IN = "STREE_HOOK_KEYS"


# what a hook's environment holds (besides what the config's hook_env names, and STREE_HOOK and
# STREE_SESSION_FILE, which stree sets for it): the system's basics. An allow-list: a secret in any other variable
# (ANTHROPIC_AUTH_TOKEN, AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, ...) never reaches a hook.
PASSED = ("PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ")
PASSED_PREFIXES = ("LC_",)  # the locale's categories


def environment(name, session_path, environ=None):
    """A hook's environment: an allow-list, not stree's own. A hook is a script, often someone
    else's, that needs no secret to see a checkout: it gets PATH, HOME, the locale (LANG,
    LANGUAGE, LC_*), TERM, TMPDIR, TZ, STREE_HOOK and STREE_SESSION_FILE, and the variables
    the config names in `hook_env`. STREE_HOOK_KEYS=1 passes stree's whole environment on
    (a hook that calls a model itself)."""
    source = os.environ if environ is None else environ
    own = {"STREE_HOOK": name, "STREE_SESSION_FILE": str(session_path)}
    if source.get(KEYS_OPT_IN) == "1":
        return dict(source, **own)
    from ..config import load_config

    named = set(load_config().get("hook_env") or ())  # (a broken config is its UsageError: exit 2)
    env = {k: v for k, v in source.items()
           if k in PASSED or k.startswith(PASSED_PREFIXES) or k in named}
    env.update(own)
    return env


def find(name, warn):
    """The hook's path, or None. A hook that is not executable is ignored (as git does)."""
    path = hooks_dir() / name
    if not path.is_file():
        return None
    from ..storage.cachedir import refuse_shared

    # as ssh: a hook runs as you, so it and its directory must be yours and no one else's to write
    fix = "skip hooks with --no-hooks"
    refuse_shared(path.parent, os.stat(path.parent), "hooks directory", fix, HookFailed)
    refuse_shared(path, os.stat(path), f"'{name}' hook", fix, HookFailed)
    if not os.access(path, os.X_OK):
        warn(f"the '{name}' hook was ignored because it is not executable ({path}); "
             f"chmod +x it to enable it")
        return None
    return path


class HookFailed(StreeError):
    code = CONFLICT


def run(name, payload, session_path, warn):
    """Run hook `name` with `payload` as JSON on stdin. Returns its stdout text, or
    None when there is no such hook. Raises HookFailed on failure or timeout."""
    path = find(name, warn)
    if path is None:
        return None
    import subprocess  # (only when there is a hook: a checkout without one starts faster)

    limit = timeout()
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    env = environment(name, session_path)
    try:
        proc = subprocess.Popen([str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=env, start_new_session=True)
    except OSError as e:
        raise HookFailed(f"cannot run the '{name}' hook {path}: {e.strerror}") from None
    try:
        try:
            out = _communicate(proc, data, limit, f"the '{name}' hook {path}")
        except subprocess.TimeoutExpired:
            _kill(proc)
            raise HookFailed(f"the '{name}' hook {path} did not finish within {limit:g} s",
                             hint="raise STREE_HOOK_TIMEOUT, or skip hooks with --no-hooks") from None
    except BaseException:
        _kill(proc)  # Ctrl-C: take the hook (and anything it started) down with us
        raise
    if proc.returncode != 0:
        how = f"was killed by signal {-proc.returncode}" if proc.returncode < 0 \
            else f"exited with status {proc.returncode}"
        raise HookFailed(f"the '{name}' hook {path} {how}", hint="skip hooks with --no-hooks")
    return out.decode("utf-8", errors="replace")


OUTPUT_MAX = 16 << 20  # bytes a hook may print; more fails the hook (nothing is written)


def _communicate(proc, data, limit, what):
    """Feed `data` to the hook's stdin and collect its stdout until the hook process exits.

    Waits for the process, not for the end of its output: a background child left holding
    stdout does not keep stree waiting (what is in the pipe when the hook exits is read,
    nothing after). Raises TimeoutExpired after `limit` seconds, HookFailed past OUTPUT_MAX."""
    import selectors
    import subprocess
    import time

    deadline = time.monotonic() + limit
    out = bytearray()
    sel = selectors.DefaultSelector()
    stdin, stdout = proc.stdin, proc.stdout
    os.set_blocking(stdout.fileno(), False)
    sel.register(stdout, selectors.EVENT_READ)
    view = memoryview(data)
    if view:
        os.set_blocking(stdin.fileno(), False)
        sel.register(stdin, selectors.EVENT_WRITE)
    else:
        stdin.close()

    def read():  # False at the end of the output
        while True:
            try:
                chunk = os.read(stdout.fileno(), 1 << 16)
            except BlockingIOError:
                return True
            if not chunk:
                return False
            out.extend(chunk)
            if len(out) > OUTPUT_MAX:
                raise HookFailed(f"{what} printed more than {OUTPUT_MAX >> 20} MiB; nothing written",
                                 hint="a before-tree hook prints one JSON object, or nothing")

    try:
        open_out = True
        while True:
            if proc.poll() is not None:
                if open_out:
                    read()  # what the hook left in the pipe; a child it left behind is not waited for
                return bytes(out)
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, limit)
            for key, _ in sel.select(min(left, 0.02)):
                if key.fileobj is stdout:
                    if not read():
                        sel.unregister(stdout)
                        open_out = False
                else:
                    try:
                        view = view[os.write(stdin.fileno(), view[:1 << 16]):]
                    except BlockingIOError:
                        continue
                    except (BrokenPipeError, OSError):
                        view = view[:0]  # the hook did not read it all: its business
                    if not view:
                        sel.unregister(stdin)
                        stdin.close()
    finally:
        sel.close()
        for f in (stdin, stdout):
            try:
                f.close()
            except OSError:
                pass


def _kill(proc):
    import signal
    import subprocess

    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    for f in (proc.stdin, proc.stdout):
        try:
            if f is not None:
                f.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)  # (not for its output: a child it left behind may hold it)
    except (subprocess.TimeoutExpired, OSError):
        pass


def parse_answer(name, text):
    """A before-tree answer: {} for no output, else a validated JSON object."""
    if not text.strip():
        return {}
    try:
        answer = json.loads(text)
    except ValueError as e:
        raise HookFailed(f"the '{name}' hook printed invalid JSON ({str(e).split(':')[0]})",
                         hint="a before-tree hook prints one JSON object, or nothing") from None
    if not isinstance(answer, dict):
        raise HookFailed(f"the '{name}' hook printed JSON that is not an object")
    checks = {
        "cancel": lambda v: isinstance(v, bool) or v is None,
        "summary": lambda v: v is None or (isinstance(v, dict) and isinstance(v.get("summary"), str)
                                           and (v.get("details") is None or isinstance(v["details"], dict))),
        "customInstructions": lambda v: v is None or isinstance(v, str),
        "replaceInstructions": lambda v: v is None or isinstance(v, bool),
        "label": lambda v: v is None or isinstance(v, str),
    }
    for key, ok in checks.items():
        if key in answer and not ok(answer[key]):
            raise HookFailed(f"the '{name}' hook answered an invalid {key!r}: {json.dumps(answer[key])[:80]}")
    return answer
