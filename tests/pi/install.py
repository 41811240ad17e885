#!/usr/bin/env python3
"""Install the pinned tarballs of pins.json under tests/pi/ (Node 22, pi 0.87.1 and 1.5.2).

Each package is fetched with `npm pack NAME@VERSION` (npm's cache, the configured registry),
checked against the sha512 integrity pinned in pins.json (npm's report and the file's own
hash), and unpacked into its `dest` (the tarball's package/ folder becomes dest/). A package
already unpacked with the same pin is left alone, so running this again does nothing.
Needs only python3 and npm; never writes outside tests/pi/ (and a temp dir).

    python3 tests/pi/install.py [--check]   (--check: exit 1 if something is missing)
"""

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PINS = HERE / "pins.json"
MARKER = ".stree-pin.json"


def installed(pin):
    try:
        return json.loads((HERE / pin["dest"] / MARKER).read_text()) == pin
    except (OSError, ValueError):
        return False


def sha512(path):
    digest = hashlib.sha512()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def fetch(pin, tmp):
    spec = f"{pin['name']}@{pin['version']}"
    proc = subprocess.run(
        ["npm", "pack", spec, "--json", "--ignore-scripts", "--pack-destination", str(tmp),
         "--loglevel=error", "--no-fund", "--no-audit"],
        cwd=tmp, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"install.py: npm pack {spec} failed:\n{proc.stderr[-2000:]}")
    try:
        [report] = json.loads(proc.stdout)
    except ValueError:
        sys.exit(f"install.py: npm pack {spec} printed no JSON report:\n{proc.stdout[-500:]}")
    tarball = tmp / report["filename"]
    for what, integrity in (("npm reports", report.get("integrity")), ("the tarball hashes to", sha512(tarball))):
        if integrity != pin["integrity"]:
            sys.exit(f"install.py: {spec}: {what} {integrity}, pins.json says {pin['integrity']}")
    return tarball


def unpack(pin, tarball, tmp):
    out = tmp / "unpacked"
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if m.name.split("/", 1)[0] == "package"]
        if hasattr(tarfile, "data_filter"):
            tar.extractall(out, members=members, filter="data")
        else:  # Python < 3.11.4 (members are checked by npm's integrity above)
            tar.extractall(out, members=members)
    (out / "package" / MARKER).write_text(json.dumps(pin) + "\n")
    dest = HERE / pin["dest"]
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(out / "package"), str(dest))


def main(argv):
    pins = json.loads(PINS.read_text())["packages"]
    missing = [pin for pin in pins if not installed(pin)]
    if "--check" in argv:
        for pin in missing:
            print(f"missing: {pin['name']}@{pin['version']} in tests/pi/{pin['dest']}", file=sys.stderr)
        return 1 if missing else 0
    for pin in pins:  # in order: a package unpacked inside another one comes after it
        if installed(pin):
            continue
        with tempfile.TemporaryDirectory(prefix="stree-pi-install-") as tmp:
            tarball = fetch(pin, Path(tmp))
            unpack(pin, tarball, Path(tmp))
        print(f"installed {pin['name']}@{pin['version']} into tests/pi/{pin['dest']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
