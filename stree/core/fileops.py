"""Files a branch touched, as pi's branch summaries record them (compaction/utils.js).

readFiles = read and never modified; modifiedFiles = written or edited; both sorted.
Sources: `read`/`write`/`edit` tool calls' `path`, and the `details` of earlier
pi-made (not hook-made) branch summaries among the entries.
"""


class FileOps:
    """pi's createFileOps(): three insertion-ordered sets (dict keys, like JS Sets)."""

    def __init__(self):
        self.read = {}
        self.written = {}
        self.edited = {}

    def add_from_summary(self, entry):
        """A branch_summary entry's details (pi skips hook-made ones)."""
        if entry.get("type") != "branch_summary" or entry.get("fromHook") or not entry.get("details"):
            return
        details = entry["details"]
        if not isinstance(details, dict):
            return
        if isinstance(details.get("readFiles"), list):
            for f in details["readFiles"]:
                if isinstance(f, str):  # pi would carry any JSON value along; paths are strings
                    self.read[f] = None
        if isinstance(details.get("modifiedFiles"), list):
            for f in details["modifiedFiles"]:
                if isinstance(f, str):
                    self.edited[f] = None

    def add_from_message(self, message):
        """pi's extractFileOpsFromMessage: tool calls of an assistant message."""
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
            target = {"read": self.read, "write": self.written, "edit": self.edited}.get(block["name"])
            if target is not None:
                target[path] = None

    def lists(self):
        """pi's computeFileLists -> (readFiles, modifiedFiles)."""
        return file_lists(self)


def _js_sort_key(text):
    # Array.prototype.sort() compares strings by UTF-16 code units, not code points
    return text.encode("utf-16-be", "surrogatepass")


def file_lists(ops):
    """(readFiles, modifiedFiles): read-only files and modified files, each sorted."""
    modified = dict(ops.edited)
    modified.update(ops.written)
    read_only = sorted((f for f in ops.read if f not in modified), key=_js_sort_key)
    return read_only, sorted(modified, key=_js_sort_key)


def file_operations(entries, message_entries=None):
    """FileOps of loaded entries (oldest first). Branch summaries count from all of
    `entries`; tool calls only from `message_entries` (default: all), which lets a
    summarizer pass just the entries that fit its token budget, as pi does."""
    ops = FileOps()
    for entry in entries:
        ops.add_from_summary(entry)
    for entry in reversed(message_entries if message_entries is not None else entries):
        if entry.get("type") == "message":
            ops.add_from_message(entry.get("message"))
    return ops


def branch_file_lists(entries):
    """{readFiles, modifiedFiles} for a branch summary of loaded `entries` (no token budget)."""
    read_files, modified_files = file_lists(file_operations(entries))
    return {"readFiles": read_files, "modifiedFiles": modified_files}


def file_ops(tree, entries):
    """(readFiles, modifiedFiles) of entry Nodes (oldest first), with no token budget."""
    return file_lists(file_operations([tree.load(node) for node in entries]))


def format_file_operations(read_files, modified_files):
    """pi's formatFileOperations: the <read-files>/<modified-files> blocks, or ''."""
    sections = []
    if read_files:
        sections.append("<read-files>\n" + "\n".join(read_files) + "\n</read-files>")
    if modified_files:
        sections.append("<modified-files>\n" + "\n".join(modified_files) + "\n</modified-files>")
    if not sections:
        return ""
    return "\n\n" + "\n\n".join(sections)
