"""The words of the SQLite catalogue's text index as a plain table (terms), for grep: the
indexed words a cut word may stand for are found by scanning it (stree.core.grep_match.words).

fts5vocab lists the words too, but it reads every word's list of entries to count them
(100+ ms over a few hundred sessions, at every grep). The terms table holds the same words
and nothing else. The text indexed since terms was last brought up to date waits in the
table `fresh` (meta 'fresh': how many characters were indexed since); the first grep after
that adds its words, tokenized by FTS5 itself (a temporary index of that text alone, read
through its own fts5vocab). Past FRESH_WHOLE characters (a first build, many sessions read
again) the text is not kept there: that grep reads the words from vocab whole, once.

terms may hold more words than the living entries have (the text of a session read again
stays in the index, dead, and vocab lists its words too): a word no living entry holds only
makes the index's query a little longer, never its answer different."""

from .common import Busy, as_text, from_text, index_text

FRESH_WHOLE = 1 << 16  # characters indexed since, past which the words are read from vocab whole
_TEMP = ("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fresh_fts USING fts5(text, content='', detail=none,"
         " tokenize='unicode61 remove_diacritics 0')",
         "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fresh_vocab USING fts5vocab(temp, fresh_fts, 'row')")


def fresh(db, base, items):
    """Note the text of `items` (Catalog.put_entries'), just indexed: kept in `fresh` while
    the text indexed since terms was brought up to date stays under FRESH_WHOLE."""
    size = sum(len(item[6]) for item in items)
    if not size:
        return
    total = db.execute("UPDATE meta SET value=value+? WHERE key='fresh' RETURNING value", (size,)).fetchone()[0]
    if total <= FRESH_WHOLE:
        db.executemany("INSERT OR REPLACE INTO fresh(rowid, text) VALUES (?, ?)",
                       [(base + item[0], as_text(item[6])) for item in items])


def table(cat):
    """'terms' when the terms table holds every word of the index (brought up to date here
    first when text was indexed since); 'vocab' when it cannot be brought up to date now
    (another process holds the write lock): the caller reads fts5vocab then."""
    db = cat.db
    if not db.execute("SELECT value FROM meta WHERE key='fresh'").fetchone()[0]:
        return "terms"
    try:
        cat.begin()
    except Busy:
        return "vocab"
    try:
        _add_fresh(db)
        cat.commit()
    except BaseException:
        cat.rollback()
        raise
    return "terms"


def _add_fresh(db):
    from ..cachedir import debug

    size = db.execute("SELECT value FROM meta WHERE key='fresh'").fetchone()[0]  # (again: inside the transaction)
    if size > FRESH_WHOLE:
        db.execute("INSERT OR IGNORE INTO terms SELECT term FROM vocab")
        debug("catalogue: the index's words read whole")
    elif size:
        for ddl in _TEMP:
            db.execute(ddl)
        rows = db.execute("SELECT rowid, text FROM fresh").fetchall()
        db.executemany("INSERT INTO temp.fresh_fts(rowid, text) VALUES (?, ?)",
                       [(rowid, index_text(from_text(text))) for rowid, text in rows])
        db.execute("INSERT OR IGNORE INTO terms SELECT term FROM temp.fresh_vocab")
        db.execute("INSERT INTO temp.fresh_fts(fresh_fts) VALUES ('delete-all')")
        debug(f"catalogue: the words of {size} new character(s) added")
    db.execute("DELETE FROM fresh")
    db.execute("UPDATE meta SET value=0 WHERE key='fresh'")
