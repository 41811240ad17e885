"""Reading back what stree printed or wrote, for tests of several commands: the ids a command
printed one a line (`ids`) and the JSON lines of a session file (`lines_of`)."""

import json


def ids(r):
    assert r.code == 0, r
    return r.out.split()


def lines_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()]
