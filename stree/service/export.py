"""serve's export_html renders the page `stree export` writes (output.export_html: the outline
with pi's filters, rendered Markdown, the strict CSP, images from oh-my-pi's blob store), not a
page of its own."""


def html_document(session, tree):
    """The served session's page, as text."""
    from ..output.export_html import render
    from ..output.transcript import Document
    from ..storage.blobs import blob_dirs, image_base64

    dirs = blob_dirs(session.path)
    doc = Document(session, tree, images=lambda data: image_base64(data, dirs))
    page = "".join(render(doc))
    return page.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate of the session: ?
