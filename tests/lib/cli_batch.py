"""Run many stree command lines in one Python process, each exactly as the console
entry point runs it (stree.cli.run with sys.argv), to fuzz thousands of cases
without paying interpreter start-up for each.

stdin: one JSON array of arguments per line. stdout: one JSON result per line,
{code, out (base64), err, seconds, timeout}. A case running longer than
--timeout seconds is stopped and reported with timeout=true.
"""

import base64
import io
import json
import signal
import sys
import time


class CaseTimeout(BaseException):
    """Not an Exception, so stree's error boundary cannot swallow it."""


def _alarm(signum, frame):
    raise CaseTimeout()


def run_case(args, timeout):
    from stree.cli import run

    out = io.BytesIO()
    err = io.BytesIO()
    real = sys.stdout, sys.stderr, sys.argv
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    sys.argv = ["stree", *args]
    code = 0
    timed_out = False
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        run()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except CaseTimeout:
        timed_out = True
        code = None
    except BaseException as e:  # anything escaping run() is a crash: report it as such
        import traceback

        sys.stderr.write("Traceback (escaped run()):\n" + "".join(traceback.format_exception(e)))
        code = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
                stream.detach()  # so that closing the wrapper later leaves the buffer readable
            except Exception:
                pass
        sys.stdout, sys.stderr, sys.argv = real
    return {"code": code, "out": base64.b64encode(out.getvalue()).decode(),
            "err": err.getvalue().decode("utf-8", errors="replace"),
            "seconds": round(time.monotonic() - start, 3), "timeout": timed_out}


def main():
    timeout = float(sys.argv[sys.argv.index("--timeout") + 1]) if "--timeout" in sys.argv else 20.0
    signal.signal(signal.SIGALRM, _alarm)
    for line in sys.stdin:
        if not line.strip():
            continue
        result = run_case(json.loads(line), timeout)
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
