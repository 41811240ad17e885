"""A validator for the subset of JSON Schema that stree/data/serve.schema.json uses: type, enum,
const, properties, required, additionalProperties (false), items, anyOf, oneOf, minimum and
local $ref. Any other keyword fails loudly (the schema must not grow past what is checked)."""

import json
from pathlib import Path

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "stree" / "data" / "serve.schema.json"
KNOWN = {"type", "enum", "const", "properties", "required", "additionalProperties", "items", "anyOf", "oneOf",
         "minimum", "$ref", "description", "$schema", "title", "$defs"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def load():
    return json.loads(SCHEMA_PATH.read_text())


def errors(value, schema, root, where="$"):
    """The list of ways `value` breaks `schema` (empty: it validates)."""
    unknown = set(schema) - KNOWN
    if unknown:
        raise AssertionError(f"schema keyword(s) the checker does not know: {unknown} at {where}")
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(value, root["$defs"][name], root, where)
    out = []
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[k](value) for k in kinds):
            return [f"{where}: {json.dumps(value)[:60]} is not {'/'.join(kinds)}"]
    if "const" in schema and not _same(value, schema["const"]):
        out.append(f"{where}: {json.dumps(value)[:60]} is not {json.dumps(schema['const'])}")
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        out.append(f"{where}: {json.dumps(value)[:60]} is not one of {schema['enum']}")
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        out.append(f"{where}: {value} < {schema['minimum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{where}: missing {key!r}")
        for key, item in value.items():
            if key in props:
                out += errors(item, props[key], root, f"{where}.{key}")
            elif schema.get("additionalProperties", True) is False:
                out.append(f"{where}: unexpected field {key!r}")
    if isinstance(value, list) and "items" in schema:
        stack = [(i, v) for i, v in enumerate(value)]
        for i, item in stack:
            out += errors(item, schema["items"], root, f"{where}[{i}]")
    if "anyOf" in schema:
        if all(errors(value, s, root, where) for s in schema["anyOf"]):
            out.append(f"{where}: matches none of anyOf")
    if "oneOf" in schema:
        matched = sum(1 for s in schema["oneOf"] if not errors(value, s, root, where))
        if matched != 1:
            out.append(f"{where}: matches {matched} of oneOf")
    return out


def _same(a, b):
    return type(a) is type(b) and a == b if isinstance(b, bool) or isinstance(a, bool) else a == b


def check_record(record, root):
    """Errors of one line the server printed, against the definition it claims to be."""
    kind = record.get("type")
    if kind == "response":
        name = f"response.{record.get('command')}" if record.get("success") else "error"
    else:
        name = f"event.{kind}"
    if name not in root["$defs"]:
        return [f"no definition {name} for {json.dumps(record)[:80]}"]
    return errors(record, {"$ref": f"#/$defs/{name}"}, root)
