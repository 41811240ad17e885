"""stree's own read questions over the wire (stree.questions: log, show, rev_parse, context, grep
and any other offered to serve). Each answers with what the CLI's --json prints for the same
question: `records`, the JSON lines of `stree log/show/rev-parse/grep --json`, and for context
the object of `stree context --json`. This is the adapter: a request's fields (camelCase) read
and checked from the question's arguments, a bad one a bad_params error naming the field."""

from ..questions import questions
from ..questions.base import whole
from .protocol import RequestError, param


class _Place:
    """The served session as a question's place: load(session) is the served session's."""

    def __init__(self, served):
        self._served = served

    def load(self, session=None):
        return self._served.load()

    def __getattr__(self, name):
        return getattr(self._served, name)


def arguments(question, request):
    """{name: value} of the fields of `request` the question takes, checked: a missing required
    field, a value of the wrong type, out of its choices or under its minimum is a RequestError."""
    kind = request.get("type")
    out = {}
    for arg in question.offered("serve"):
        if arg.kind is list:
            value = param(request, arg.wire, list, default=None)
            if value is not None and arg.choices is not None:
                for v in value:
                    if v not in arg.choices:
                        raise RequestError(f"{kind}: field '{arg.wire}' holds {v!r}; each must be one of "
                                           + ", ".join(arg.choices))
            elif value is not None and arg.nonempty and (not value or not all(isinstance(v, str) for v in value)):
                raise RequestError(f"{kind}: field '{arg.wire}' must be a non-empty array of strings")
        else:
            value = param(request, arg.wire, arg.kind, required=arg.required, choices=arg.choices)
            if value is not None and arg.minimum is not None and value < arg.minimum:
                raise RequestError(f"{kind}: field '{arg.wire}' must be {arg.minimum} or more")
        if value is not None:
            out[arg.name] = value
    if question.check is not None:
        from ..questions.base import Refused

        wires = {a.name: a.wire for a in question.args}
        try:
            question.check(out)
        except Refused as e:
            raise RequestError(f"{kind}: {e.spelled(wires.get)}") from None
    return out


def handler(question):
    """The handler (served, request) -> data of a question."""
    key = question.serve[1]

    def answer(served, request):
        data = whole(question.answer(_Place(served), **arguments(question, request)))
        return data if key is None else {key: data}
    answer.__doc__ = f"stree's {question.name}: the records of its --json."
    return answer


HANDLERS = {q.serve[0]: handler(q) for q in questions() if q.serve is not None}
