"""Generate stree/data/complete_table.json (what `stree __complete` reads) and, beside it,
stree/argv_table.py (what the fast paths read a command line with: stree.argv) from the click
definitions.

    python tools/gen_complete_table.py [FILE]     (default: stree/data/complete_table.json;
                                                   `make complete-table`)
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stree.complete_click import argv_table_text, table_text  # noqa: E402

if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "stree" / "data" / "complete_table.json"
    out.write_text(table_text(), encoding="utf-8")
    argv_out = out.parent / "argv_table.py" if len(sys.argv) > 1 else ROOT / "stree" / "argv_table.py"
    argv_out.write_text(argv_table_text(), encoding="utf-8")
