"""How an editor uses `stree serve`: start it, show the tree, then follow the session: on each
entries_appended event, fetch only the new entries with get_entries since the last one seen.

    python examples/serve_client.py SESSION [EVENTS]    (ends after EVENTS events, default 1)
"""
import json
import subprocess
import sys

session, wanted = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1
server = subprocess.Popen(["stree", "-s", session, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
events = []  # events read while waiting for a response


def request(id, type, **fields):
    server.stdin.write((json.dumps({"id": id, "type": type, **fields}) + "\n").encode())
    server.stdin.flush()
    while True:
        record = json.loads(server.stdout.readline())  # records end at LF only (not at U+2028)
        if record.get("type") != "response":
            events.append(record)
        elif record.get("id") == id:
            if not record["success"]:
                sys.exit(f"{type}: {record['error']} ({record['errorCode']})")
            return record.get("data")


tree = request("tree", "get_tree", lightweight=True)  # pi PR #1762's small nodes, for a tree view
cursor = request("entries", "get_entries")["leafId"]  # the last entry: where to continue from
print(f"{len(tree['tree'])} root(s); leaf {tree['leafId']}", flush=True)
for n in range(wanted):
    event = events.pop(0) if events else json.loads(server.stdout.readline())
    if event["type"] != "entries_appended":
        sys.exit(f"stopped: {event}")
    for entry in request(f"new{n}", "get_entries", since=cursor)["entries"]:
        print(entry["id"], entry["type"], entry.get("message", {}).get("role", ""), flush=True)
        cursor = entry["id"]
server.stdin.close()  # end of input: the server exits
sys.exit(server.wait())
