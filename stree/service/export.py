"""export_html's page: one self-contained HTML file (no script, no outside resources) with the
messages on the path to the leaf. Kept minimal and in one function: `stree export` may bring
a fuller page to put in its place."""

from html import escape


def html_document(session, tree):
    from ..core.preview import entry_text

    title = tree.name() or str(session.header.get("id") or session.path)
    rows = []
    for node in tree.path(tree.leaf) if tree.leaf is not None else []:
        entry = tree.load(node)
        kind = node.role or node.type
        text = entry_text(entry) or ""
        rows.append(f'<section class="{escape(str(kind))}"><h2>{escape(str(kind))} '
                    f'<small>{escape(str(node.id))} {escape(str(node.ts or ""))}</small></h2>'
                    f"<pre>{escape(text)}</pre></section>")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>"
            "body{font-family:sans-serif;max-width:60em;margin:auto}pre{white-space:pre-wrap}"
            "section{border-top:1px solid #ccc}.user h2{color:#06c}.assistant h2{color:#080}"
            "</style></head><body>"
            f"<h1>{escape(title)}</h1>" + "\n".join(rows) + "</body></html>\n")
