"""`make test-latest` (tests/pi/latest.py) on a fake "newer pi": the pinned reference copied,
relabelled 9.9.9, with one behaviour patched in its bundle (the /tree row of a compaction).
The report must name exactly that difference: every other area agrees, and each
disagreement is a /tree row of a compaction, with both answers."""

import re
import shutil
import subprocess
import sys

from pi_harness import REFERENCE, package_dir

ROOT = package_dir(REFERENCE).parents[3]


def test_the_report_names_exactly_the_patched_difference(tmp_path):
    fake = tmp_path / "latest" / "9.9.9"
    shutil.copytree(package_dir(REFERENCE), fake, symlinks=True)
    [chunk] = [p for p in (fake / "dist" / "bundle" / "chunks").glob("*.js")
               if "`[compaction: ${tokens}k tokens]`" in p.read_text(encoding="utf-8")]
    chunk.write_text(chunk.read_text(encoding="utf-8").replace("`[compaction: ${tokens}k tokens]`",
                                                               "`[compacted: ${tokens}k tokens]`"), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "pi" / "latest.py"), "--version", "9.9.9",
                           "--dir", str(tmp_path / "latest"), "--quick", "--no-matrix"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == f"pi 9.9.9 against the reference pi {REFERENCE} (whose answers stree gives):"
    counts = {m.group(1).strip(): (int(m.group(2)), int(m.group(3)))
              for m in (re.fullmatch(r"  (.+?) +(\d+)/(\d+) agree", line) for line in lines[1:7]) if m}
    assert list(counts) == ["context", "rows", "search", "writes", "summary request", "RPC shapes"]
    for area, (ok, n) in counts.items():
        assert n > 0 and (ok < n if area == "rows" else ok == n), (area, ok, n)
    wrong = counts["rows"][1] - counts["rows"][0]
    assert lines[7] == f"{wrong} disagreement(s):"
    blocks = lines[8:]
    assert len(blocks) == 4 * wrong
    for k in range(wrong):
        head, where, ours, theirs = blocks[4 * k:4 * k + 4]
        assert re.fullmatch(r"  \[rows\] \w+\.jsonl: graph --filter [a-z-]+", head), head
        assert where.startswith("      at $.rows[")
        assert ours.startswith(f"      {REFERENCE}: ") and "[compaction: " in ours
        assert theirs.startswith("      9.9.9: ") and theirs.replace("[compacted: ", "[compaction: ")[13:] == \
            ours[len(f"      {REFERENCE}: "):]
