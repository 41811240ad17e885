"""`stree ls`: the sessions, sorted as pi sorts them, with the ids abbreviated and the default
marked."""

import json

from builders import sessions_sharing_a_prefix


def test_ls_sorts_like_pi_abbreviates_and_marks_the_default(stree, tmp_path):
    directory, made = sessions_sharing_a_prefix(tmp_path)

    def here(*args):  # run in the sessions' project directory
        return stree("-C", directory, "--session-dir", directory, *args)

    recs = [json.loads(x) for x in here("ls", "--json").out.splitlines()]
    # entry times say 1112 is newest; its messages' own timestamps say it is the oldest
    assert [r["id"][:13] for r in recs] == ["019a0000-2222", "019a0000-1111", "019a0000-1112"]
    newest_file = made["019a0000-2222-7ccc-8ccc-cccccccccccc"]  # the highest mtime: what pi -c opens
    assert [r["current"] for r in recs] == [r["path"] == str(newest_file) for r in recs]
    assert sum(r["current"] for r in recs) == 1

    r = here("ls")
    lines = r.out.splitlines()
    shown = [line[2:].split()[0] for line in lines]
    assert shown == ["019a0000-2", "019a0000-1111", "019a0000-1112"]
    assert lines[0].startswith("* ") and all(line.startswith("  ") for line in lines[1:])
    for abbrev, rec in zip(shown, recs):  # each abbreviation names its session
        assert here("-s", abbrev, "log", "-n", "1", "--format", "{preview}").out \
            == f"assistant: done {['019a0000-1111', '019a0000-1112', '019a0000-2222'].index(rec['id'][:13])}\n"
    assert here("-s", "019a0000", "log").code == 3  # 8 chars: ambiguous
