"""What `stree replay` prints: the table of turns, its summary, and the JUnit XML report. The
same concept one layer up is the command, stree.commands.replay."""

from ..format.terminal import inert

COLUMNS = ("ENTRY", "RECORDED", "NEW", "TOOLS", "STOP", "SIM", "TOKENS", "COST")


def _cell(value, width=None):
    text = "-" if value is None else str(value)
    text = inert(text, oneline=True)
    if width and len(text) > width:
        text = text[:width - 1] + "…"
    return text


def row(record):
    """One turn as the table's cells."""
    tokens = record.get("tokens")
    if record.get("error"):
        return [record["entryId"], _cell(record.get("recordedModel"), 24), "-", "error", "-", "-", "-", "-"]
    stop = record["newStop"] if record["newStop"] == record["recordedStop"] else \
        f"{record['recordedStop']}->{record['newStop']}"
    return [record["entryId"], _cell(record.get("recordedModel"), 24), _cell(record.get("newModel"), 24),
            record["tools"], _cell(stop), f"{record['similarity']:.2f}",
            str(tokens["input"] + tokens["cacheRead"] + tokens["cacheWrite"]) + "/" + str(tokens["output"]),
            f"{record['cost']:.4f}"]


def table_line(cells, widths):
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()


WIDTHS = (8, 24, 24, 6, 16, 4, 13, 8)


def header():
    return table_line(COLUMNS, WIDTHS)


def line(record):
    cells = row(record)
    text = table_line(cells, WIDTHS)
    if record.get("diverged"):
        text += "  ! " + _cell("; ".join(r for r in record["reasons"] if r))
    return text


def summary(records, threshold, skipped=0, interrupted=False):
    diverged = sum(1 for r in records if r.get("diverged"))
    failed = sum(1 for r in records if r.get("error"))
    tokens = sum((r["tokens"]["input"] + r["tokens"]["output"] + r["tokens"]["cacheRead"] + r["tokens"]["cacheWrite"])
                 for r in records if r.get("tokens"))
    cost = sum(r.get("cost") or 0 for r in records)
    turns = f"{len(records)} turn" + ("" if len(records) == 1 else "s")
    text = f"{turns} replayed, {diverged} diverged (threshold {threshold:g})"
    if failed:
        text += f", {failed} failed"
    text += f"; {tokens} tokens, cost {cost:.4f}"
    if skipped:
        text += f"; {skipped} not sent (budget)"
    if interrupted:
        text += "; interrupted"
    return text


def junit_xml(records, suite, threshold, skipped=()):
    """A JUnit XML report: one testcase per turn, a failure for a divergence, an error for a
    turn the model did not answer, skipped for a turn past the budget."""
    import xml.etree.ElementTree as ET

    failures = sum(1 for r in records if r.get("diverged") and not r.get("error"))
    errors = sum(1 for r in records if r.get("error"))
    root = ET.Element("testsuites", name="stree replay", tests=str(len(records) + len(skipped)),
                      failures=str(failures), errors=str(errors))
    node = ET.SubElement(root, "testsuite", name=suite, tests=str(len(records) + len(skipped)),
                         failures=str(failures), errors=str(errors), skipped=str(len(skipped)))
    for r in records:
        case = ET.SubElement(node, "testcase", classname=suite, name=f"turn {r['turn']} {r['entryId']}")
        details = (f"recorded {r.get('recordedModel')}, new {r.get('newModel')}; tools {r.get('tools')} "
                   f"({r.get('recordedTools')} -> {r.get('newTools')}); stop {r.get('recordedStop')} -> "
                   f"{r.get('newStop')}; similarity {r.get('similarity')} (threshold {threshold:g})")
        if r.get("error"):
            ET.SubElement(case, "error", message=_xml_text(r["error"])).text = _xml_text(r["error"])
        elif r.get("diverged"):
            ET.SubElement(case, "failure", message=_xml_text("; ".join(r["reasons"]))).text = _xml_text(details)
        ET.SubElement(case, "system-out").text = _xml_text(details)
    for job in skipped:
        case = ET.SubElement(node, "testcase", classname=suite, name=f"turn {job.turn} {job.entry_id}")
        ET.SubElement(case, "skipped", message="not sent: the --max-cost budget was spent")
    ET.indent(root)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n").encode("utf-8")


def _xml_text(text):
    """Text XML 1.0 can carry: other control characters become U+FFFD."""
    return "".join(c if c in "\t\n\r" or (ord(c) >= 0x20 and not 0xd800 <= ord(c) <= 0xdfff and ord(c) not in
                                           (0xfffe, 0xffff)) else "\ufffd" for c in str(text))
