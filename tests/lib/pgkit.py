"""A real, throwaway PostgreSQL server for the tests of the shared catalogue: Debian's
`postgresql` package (`make test` installs it with the other system tools), a cluster made
by initdb in a temp dir, listening on a Unix socket there only, started once per test
session and stopped at its end.

Without the server's programs the tests are skipped with the reason, as the other system
tools' tests are (`make test` says which; `STREE_TEST_APT=1 make test` installs them), except
where STREE_TEST_APT=1 asked for them to be installed (CI): there a missing server FAILS.
PostgreSQL refuses to run as root: as root the server runs as the `postgres` user."""

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import pytest


def binaries():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if found:
        return os.path.dirname(found[-1])
    pg_ctl = shutil.which("pg_ctl")
    return os.path.dirname(pg_ctl) if pg_ctl else None


class Server:
    def __init__(self, bindir, base):
        self.bindir = bindir
        self.base = base
        self.data = os.path.join(base, "data")
        self.sock = base
        self.runas = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(base, user.pw_uid, user.pw_gid)
            self.runas = ["runuser", "-u", "postgres", "--"]
        self.port = 5432 + os.getpid() % 1000

    def run(self, tool, *args, check=True):
        return subprocess.run(self.runas + [os.path.join(self.bindir, tool), *args], capture_output=True, text=True,
                              check=check, timeout=120)

    def init(self):
        self.run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8",
                 "--locale=C.UTF-8")

    def start(self):
        opts = f"-k {self.sock} -c listen_addresses='' -p {self.port} -c fsync=off"
        r = self.run("pg_ctl", "-D", self.data, "-o", opts, "-l", os.path.join(self.base, "log"), "-w", "-t", "60",
                     "start", check=False)
        if r.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {r.stderr}{self.log()}")

    def stop(self, mode="fast"):
        self.run("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop", check=False)

    def kill(self):
        """The server killed as a crash would (SIGKILL to the postmaster and its backends)."""
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            pid = int(f.readline())
        subprocess.run(["pkill", "-KILL", "-P", str(pid)], check=False)
        os.kill(pid, 9)
        deadline = time.time() + 60
        while time.time() < deadline:  # gone (its shared memory with it) before it is started again
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            try:
                os.waitpid(pid, os.WNOHANG)  # (reaped, when it was this process's child)
            except ChildProcessError:
                pass
            time.sleep(0.01)

    def log(self):
        try:
            with open(os.path.join(self.base, "log")) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def url(self, db="postgres", user="postgres"):
        return f"postgresql://{user}@/{db}?host={self.sock}&port={self.port}"

    def sql(self, statement, db="postgres", user="postgres"):
        import psycopg

        with psycopg.connect(self.url(db, user), autocommit=True) as con:
            cur = con.execute(statement)
            return cur.fetchall() if cur.description else None

    def fresh_db(self, name):
        self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.sql(f'CREATE DATABASE "{name}"')
        return self.url(name)


@pytest.fixture(scope="session")
def pg_server():
    bindir = binaries()
    if bindir is None:
        message = ("PostgreSQL's server programs (initdb, pg_ctl) are not installed: the shared catalogue's tests "
                   "need them (as root: apt-get install postgresql, or STREE_TEST_APT=1 make test)")
        if os.environ.get("STREE_TEST_APT") == "1":
            pytest.fail(message + "; STREE_TEST_APT=1 asked make test to install it", pytrace=False)
        pytest.skip(message)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.fail("psycopg 3 is not installed: pip install 'stree[test]'", pytrace=False)
    base = tempfile.mkdtemp(prefix="stree-pg-")
    os.chmod(base, 0o755)
    server = Server(bindir, base)
    server.init()
    server.start()
    try:
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server, request):
    name = "t_" + "".join(ch if ch.isalnum() else "_" for ch in request.node.name)[:50].lower()
    return pg_server.fresh_db(name)
