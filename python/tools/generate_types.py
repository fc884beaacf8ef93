"""Writes updown/types.py from the committed OpenAPI document (../openapi.json).

    python3 python/tools/generate_types.py            # rewrite python/updown/types.py
    python3 python/tools/generate_types.py --check    # exit 1 when the file differs from what it would write

Every schema of components.schemas becomes a TypedDict (inline objects become TypedDicts named after
their place), every operation's query parameters a TypedDict ``<OperationId>Query``, every JSON body a
TypedDict ``<OperationId>Body``, and OPERATIONS maps each operationId to its method and path: the
client takes its paths from there, so the document is the one definition of both. The output depends
on the document alone (sorted where the document has no order), so regenerating gives identical bytes.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "openapi.json"
TARGET = ROOT / "python" / "updown" / "types.py"


def pascal(text: str) -> str:
    parts = re.split(r"[^0-9A-Za-z]+", text)
    out = "".join(p[:1].upper() + p[1:] for p in parts if p)
    return out if out and not out[0].isdigit() else "T" + out


class Generator:
    def __init__(self, document: Dict[str, Any]) -> None:
        self.document = document
        self.schemas: Dict[str, Any] = document.get("components", {}).get("schemas", {})
        self.blocks: List[str] = []
        self.named: Dict[str, str] = {}  # generated name -> block, for inline objects met twice
        self.shapes: Dict[str, Dict[str, str]] = {}

    # ---- types ----

    def type_of(self, schema: Any, place: str) -> str:
        """The Python type (as source text) of a schema; `place` names an inline object."""
        if not isinstance(schema, dict) or schema == {}:
            return "Any"
        if "$ref" in schema:
            return repr(schema["$ref"].rsplit("/", 1)[-1])[1:-1]
        if "enum" in schema:
            return "Literal[" + ", ".join(literal(v) for v in schema["enum"]) + "]"
        if "const" in schema:
            return "Literal[" + literal(schema["const"]) + "]"
        for combinator in ("anyOf", "oneOf"):
            if combinator in schema:
                options = [self.type_of(s, f"{place}Option{i + 1}") for i, s in enumerate(schema[combinator])]
                return self.union(options)
        kind = schema.get("type")
        if isinstance(kind, list):
            return self.union([self.type_of({**schema, "type": k}, place) for k in kind])
        if kind == "null":
            return "None"
        if kind == "string":
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "array":
            return f"List[{self.type_of(schema.get('items', {}), place + 'Item')}]"
        if kind == "object" or "properties" in schema:
            if not schema.get("properties"):
                return "Dict[str, Any]"
            self.typed_dict(place, schema)
            return place
        return "Any"

    def shape_of(self, schema: Any, kind: str) -> str:
        """What a frame does with a field: "datetime", a TypedDict's name (an object), or "value"."""
        options = [schema]
        if isinstance(schema, dict):
            options = schema.get("anyOf") or schema.get("oneOf") or [schema]
        for option in options:
            if isinstance(option, dict) and option.get("format") == "date-time":
                return "datetime"
        bare = kind[len("Optional["):-1] if kind.startswith("Optional[") else kind
        return bare if bare in self.shapes or bare in self.schemas and bare in self.named else "value"

    @staticmethod
    def union(options: List[str]) -> str:
        unique = list(dict.fromkeys(options))
        if "Any" in unique:
            return "Any"
        nullable = "None" in unique
        rest = [o for o in unique if o != "None"]
        if not rest:
            return "None"
        inner = rest[0] if len(rest) == 1 else f"Union[{', '.join(rest)}]"
        return f"Optional[{inner}]" if nullable else inner

    def typed_dict(self, name: str, schema: Dict[str, Any], total_default: Optional[bool] = None) -> None:
        if name in self.named:
            return
        self.named[name] = ""
        properties: Dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", [])) if total_default is None else set()
        fields = [(key, self.type_of(value, name + pascal(key)), key in required, value) for key, value in properties.items()]
        self.shapes[name] = {key: self.shape_of(value, kind) for key, kind, _, value in fields}
        doc = schema.get("description")
        self.blocks.append(self.render(name, fields, doc))

    @staticmethod
    def render(name: str, fields: List[Tuple[str, str, bool, Any]], doc: Optional[str]) -> str:
        required = [f for f in fields if f[2]]
        optional = [f for f in fields if not f[2]]
        plain = all(key.isidentifier() and not keyword.iskeyword(key) for key, _, _, _ in fields)
        lines: List[str] = []

        def functional(target: str, group: List[Tuple[str, str, bool, Any]], total: bool) -> None:
            body = ", ".join(f"{json.dumps(k)}: {repr_type(t)}" for k, t, _, _ in group)
            lines.append(f"{target} = TypedDict({json.dumps(target)}, {{{body}}}, total={total})")

        def klass(target: str, base: str, group: List[Tuple[str, str, bool, Any]], total: bool, text: Optional[str]) -> None:
            suffix = "" if total else ", total=False"
            lines.append(f"class {target}({base}{suffix}):")
            if text:
                lines.append(f"    {json.dumps(text)}")
            for key, kind, _, schema in group:
                note = schema.get("description") if isinstance(schema, dict) else None
                if note:
                    lines.append(f"    #: {note}")
                lines.append(f"    {key}: {kind}")
            if not group and not text:
                lines.append("    pass")

        if not plain:
            # A key that is not an identifier (such as `from`) needs the functional form; its keys are
            # required when the schema requires any (the document's such objects require them all).
            functional(name, fields, bool(required))
            return "\n".join(lines)
        if required and optional:
            klass(f"_{name}Required", "TypedDict", required, True, None)
            lines.append("")
            lines.append("")
            klass(name, f"_{name}Required", optional, False, doc)
        else:
            klass(name, "TypedDict", fields, bool(required) or not fields, doc)
        return "\n".join(lines)

    # ---- the document ----

    def generate(self) -> str:
        for name in self.schemas:
            schema = self.schemas[name]
            if isinstance(schema, dict) and (schema.get("type") == "object" or "properties" in schema) and schema.get("properties"):
                self.typed_dict(name, schema)
            else:
                self.blocks.append(f"{name} = {self.type_of(schema, name)}")
        operations: List[Tuple[str, str, str]] = []
        for path, item in self.document.get("paths", {}).items():
            for method, op in item.items():
                if method not in ("get", "post", "put", "patch", "delete") or "operationId" not in op:
                    continue
                op_id = op["operationId"]
                operations.append((op_id, method.upper(), path))
                query = [p for p in op.get("parameters", []) if p.get("in") == "query"]
                if query:
                    fields = [
                        (p["name"], self.type_of(p.get("schema", {}), pascal(op_id) + "Query" + pascal(p["name"])), bool(p.get("required")), p)
                        for p in query
                    ]
                    self.named[pascal(op_id) + "Query"] = ""
                    self.blocks.append(self.render(pascal(op_id) + "Query", fields, f"Query of {op_id}"))
                body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
                if isinstance(body, dict):
                    body_name = pascal(op_id) + "Body"
                    if "$ref" in body:
                        self.blocks.append(f"{body_name} = {self.type_of(body, body_name)}")
                    else:
                        self.typed_dict(body_name, body)
        head = [
            '"""Types of the Up or Down history API, generated from openapi.json by python/tools/generate_types.py.',
            "",
            "Do not edit: regenerate with `python3 python/tools/generate_types.py` (a test checks the bytes).",
            '"""',
            "",
            "# fmt: off",
            "from __future__ import annotations",
            "",
            "from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union",
            "",
            f"API_VERSION = {json.dumps(self.document.get('info', {}).get('version', ''))}",
            "",
            "#: operationId -> (HTTP method, path template), in the document's order.",
            "OPERATIONS: Dict[str, Tuple[str, str]] = {",
        ]
        head += [f"    {json.dumps(op_id)}: ({json.dumps(m)}, {json.dumps(p)})," for op_id, m, p in operations]
        head.append("}")
        head.append("")
        head.append("#: TypedDict -> {field: 'datetime' | the TypedDict of an object field | 'value'}, in field order:")
        head.append("#: what DataFrames turn into timezone-aware times and which objects they flatten.")
        head.append("SHAPES: Dict[str, Dict[str, str]] = {")
        for name in sorted(self.shapes):
            inner = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in self.shapes[name].items())
            head.append(f"    {json.dumps(name)}: {{{inner}}},")
        head.append("}")
        # Inline objects are written before the object that holds them, so names exist when read
        # (annotations are lazy anyway, but the functional form evaluates them).
        return "\n".join(head) + "\n\n\n" + "\n\n\n".join(self.blocks) + "\n"


def literal(value: Any) -> str:
    """A JSON value as Python source (true -> True, null -> None)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    return json.dumps(value)


def repr_type(kind: str) -> str:
    """A type for the functional TypedDict form, where annotations are evaluated: quoted."""
    return json.dumps(kind)


def main(argv: List[str]) -> int:
    text = Generator(json.loads(DOCUMENT.read_text(encoding="utf-8"))).generate()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is not what {DOCUMENT.name} generates: run python3 python/tools/generate_types.py", file=sys.stderr)
            return 1
        return 0
    if "--stdout" in argv:
        sys.stdout.write(text)
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
