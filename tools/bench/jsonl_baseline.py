"""The parse floor: a plain json.loads of every line of a session file."""
import json
import sys

n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        if line.strip():
            json.loads(line)
            n += 1
print(n)
