"""Files a branch touched: pi's prepareBranchEntries file tracking + computeFileLists.

`read`, `write` and `edit` tool calls' `path` argument in assistant messages, plus
the details of earlier pi-made branch summaries (cumulative tracking).
"""


class FileOps:
    def __init__(self):
        self.read = {}  # insertion-ordered sets (dict keys), like JS Sets
        self.written = {}
        self.edited = {}


def file_operations(entries, message_entries=None):
    """FileOps of loaded entries (oldest first). Branch summaries count from all of
    `entries`; tool calls only from `message_entries` (default: all), which lets a
    summarizer pass just the entries that fit its token budget, as pi does."""
    ops = FileOps()
    for entry in entries:
        if entry.get("type") == "branch_summary" and not entry.get("fromHook") and entry.get("details"):
            details = entry["details"]
            if not isinstance(details, dict):
                continue
            if isinstance(details.get("readFiles"), list):
                for f in details["readFiles"]:
                    if isinstance(f, str):
                        ops.read[f] = None
            if isinstance(details.get("modifiedFiles"), list):
                for f in details["modifiedFiles"]:
                    if isinstance(f, str):
                        ops.edited[f] = None
    for entry in reversed(message_entries if message_entries is not None else entries):
        if entry.get("type") == "message":
            _tool_calls(entry.get("message"), ops)
    return ops


def _tool_calls(message, ops):
    # pi's extractFileOpsFromMessage
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return
    content = message.get("content")
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        if "arguments" not in block or "name" not in block:
            continue
        args = block["arguments"]
        if not isinstance(args, dict):
            continue
        path = args.get("path")
        if not isinstance(path, str) or not path:
            continue
        target = {"read": ops.read, "write": ops.written, "edit": ops.edited}.get(block["name"])
        if target is not None:
            target[path] = None


def _js_sort_key(text):
    # Array.prototype.sort() compares UTF-16 code units, not code points
    return text.encode("utf-16-be", errors="surrogatepass")


def file_lists(ops):
    """(readFiles, modifiedFiles): read-only files and modified files, each sorted."""
    modified = dict(ops.edited)
    modified.update(ops.written)
    read_only = sorted((f for f in ops.read if f not in modified), key=_js_sort_key)
    return read_only, sorted(modified, key=_js_sort_key)


def branch_file_lists(entries):
    """readFiles / modifiedFiles for a branch summary of `entries` (no token budget)."""
    read_files, modified_files = file_lists(file_operations(entries))
    return {"readFiles": read_files, "modifiedFiles": modified_files}
