"""Files a client names for stree to write (serve's export_html outputPath): an existing file is
replaced only when the request says `overwrite: true`, and a session file never (issue 24,
item 1: export_html given the served session's own path replaced it with HTML)."""

import os
import shutil

import pytest
from serve_kit import Server


@pytest.fixture
def server(demo):
    s = Server(demo)
    yield s
    s.kill()


def test_export_html_over_the_served_session_is_refused_and_the_session_is_untouched(server, demo):
    before = demo.read_bytes()
    for overwrite in (False, True):
        r = server.request("export_html", outputPath=str(demo), overwrite=overwrite)
        assert r["success"] is False and r["errorCode"] == "conflict", r
        assert "session file" in r["error"] and str(demo) in r["error"]
    assert demo.read_bytes() == before
    assert server.data("get_state")["sessionFile"] == str(demo)  # and it is still served


def test_export_html_over_another_session_file_is_refused_even_with_overwrite(server, demo, tmp_path):
    other = tmp_path / "elsewhere" / "copy.jsonl"
    other.parent.mkdir()
    shutil.copyfile(demo, other)
    link = tmp_path / "page.html"
    link.symlink_to(other)  # a link to a session: writing "page.html" would rewrite the session
    sibling = demo.parent / "fresh.jsonl"  # a session being started: no header on disk yet
    sibling.write_bytes(b"")
    for target in (other, link, sibling):
        before = os.path.realpath(target), open(target, "rb").read()
        r = server.request("export_html", outputPath=str(target), overwrite=True)
        assert r["success"] is False and r["errorCode"] == "conflict", (target, r)
        assert open(before[0], "rb").read() == before[1]


def test_export_html_over_an_existing_file_needs_overwrite(server, tmp_path):
    page = tmp_path / "notes.html"
    page.write_text("mine\n")
    r = server.request("export_html", outputPath=str(page))
    assert r["success"] is False and r["errorCode"] == "conflict" and "already exists" in r["error"]
    assert "overwrite" in r["hint"]
    assert page.read_text() == "mine\n"
    assert server.data("export_html", outputPath=str(page), overwrite=True) == {"path": str(page)}
    assert page.read_text().startswith("<!DOCTYPE html>")


def test_export_html_relative_path_is_checked_in_the_working_directory(demo, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "out.html").write_text("kept\n")
    s = Server(demo, cwd=work)
    try:
        r = s.request("export_html", outputPath="out.html")
        assert r["success"] is False and r["errorCode"] == "conflict"
        assert (work / "out.html").read_text() == "kept\n"
        assert s.data("export_html", outputPath="new.html") == {"path": "new.html"}
        assert (work / "new.html").read_text().startswith("<!DOCTYPE html>")
    finally:
        assert s.close() == 0
