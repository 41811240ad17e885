"""Run stree with a failing disk: `python faulty_stree.py ARGS...` with FAULT set to

  enospc       every write to a regular file fails with ENOSPC
  enospc-half  the first write lands half its bytes, the next fails with ENOSPC
  eio-fsync    fsync fails with EIO
  eio-read     reading a session file fails with EIO

then runs stree.cli.run exactly as the console script does.
"""

import errno
import os
import stat
import sys

MODE = os.environ.get("FAULT", "")
_write, _fsync, _read, _pread = os.write, os.fsync, os.read, os.pread
_calls = {"write": 0}


def _regular(fd):
    try:
        return fd > 2 and stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        return False


def write(fd, data):
    if _regular(fd) and MODE.startswith("enospc"):
        _calls["write"] += 1
        if MODE == "enospc-half" and _calls["write"] == 1 and len(data) > 1:
            return _write(fd, bytes(data)[:len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return _write(fd, data)


def fsync(fd):
    if MODE == "eio-fsync" and _regular(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))
    return _fsync(fd)


def pread(fd, n, offset):
    if MODE == "eio-read" and _regular(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))
    return _pread(fd, n, offset)


os.write, os.fsync, os.pread = write, fsync, pread

if __name__ == "__main__":
    sys.argv = ["stree", *sys.argv[1:]]
    from stree.cli import run

    run()
