"""The catalogue's session rows decoded together (storage.catalog.common.rows_of) are the rows
decoded one by one (row_of), a damaged row included: its damage stays in its own row."""

from stree.storage.catalog.common import JSON_COLUMNS, SESSION_COLUMNS, enc, row_of, rows_of


def stored(n):
    return [[enc(f"/s/{n}/{c}") if c in JSON_COLUMNS else n for c in SESSION_COLUMNS]]


def test_rows_decoded_together_are_the_rows_decoded_one_by_one():
    many = stored(1) + stored(2) + [[None if c in JSON_COLUMNS else 3 for c in SESSION_COLUMNS]]
    assert rows_of(many) == [row_of(values) for values in many]
    assert rows_of(many)[1]["path"] == "/s/2/path"


def test_a_column_holding_two_values_shifts_no_other_rows_columns():
    damaged = stored(1)[0]
    damaged[SESSION_COLUMNS.index("cwd")] = '"x", "y"'
    many = [damaged] + stored(2)
    rows = rows_of(many)
    assert rows[1] == row_of(stored(2)[0]) and rows[1]["path"] == "/s/2/path"
    assert rows[0] == row_of(damaged)
