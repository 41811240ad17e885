"""Names vulture (`make test`: `vulture stree tools tests tools/vulture_allow.py`) reports as
unused that are used from outside Python's sight: hooks that click, pytest, http.server and
HTMLParser call by name, fixtures requested for their effect, fields of a record. Anything else
it reports is dead code: remove it rather than listing it here."""

# ruff: noqa
_ = object()

# click calls it to list the commands in `stree --help` (stree.cli.LazyGroup)
_.format_commands

# pytest's hooks (tests/conftest.py: the markers) and a module's marks
pytest_collection_modifyitems
pytestmark

# http.server and socketserver hooks (the tests' LLM and HTTP servers)
_.do_GET
_.do_POST
_.log_message
_.handle_error
_.daemon_threads
protocol_version
_.close_connection  # read by BaseHTTPRequestHandler after each request (stree.service.cassette)

# html.parser hooks (tests/cli/test_export.py)
_.handle_starttag
_.handle_endtag

# fixtures requested for their effect, and a name an unpacking binds
each_command_a_process  # (autouse: the work-counting catalogue tests)
home_env
t2
small_blocks  # (tests/reliability/test_index_blocks.py: blocks of 4 KiB)

# a module's __getattr__ (PEP 562): the import system calls it (commands/ask.py: a question's command by name)
__getattr__

# a field of a provider's answer: what the model said about why it stopped (stree.providers.Answer)
stop_reason

# Left for after this round's merge (files other branches are editing): the errorCode values
# serve documents (service/protocol.py), Resolver.by_label (core/revs.py), the catalogue's
# own_names and rebuilt (storage/catalog/), a test helper (tests/reliability/test_faults.py stree_cmd).
ERROR_CODES
_.by_label
own_names
_.rebuilt
stree_cmd

# a Shape's fields, read through getattr(self, "_" + name) by its lazy properties (stree.storage.shape)
_._nkids
_._shadowed
_._dangling
_._labels
_._stamps
_._targets

# the options Python's C JSON scanner reads of its decoder object (stree.format.decode._Decoding)
strict
object_hook
object_pairs_hook
parse_float
