"""No DynamoDB Scan on any handler path: every read is a GetItem or a Query.

Static and offline: the Lambda code (``shared/``, ``functions/``) is read as source
and as an AST; nothing is imported from boto3 or contacted.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAMBDA_CODE = [p for d in ("shared", "functions") for p in sorted((ROOT / d).rglob("*.py"))]
# .scan( / "Scan" / 'Scan' / get_paginator("scan") / Select="...SCAN..." style spellings.
SCAN_TEXT = re.compile(
    r"""\.scan\s*\(|["']Scan["']|get_paginator\(\s*["']scan["']\s*\)|\bscan_table\b""",
    re.IGNORECASE,
)


def _scan_calls(tree: ast.AST) -> list[int]:
    """Lines with ``<anything>.scan(...)``, a ``"Scan"`` / ``"scan"`` string used as an
    operation name (get_paginator, _make_api_call, getattr), or ``Table.scan``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.lower() == "scan":
            lines.append(node.lineno)
        elif isinstance(node, ast.Call):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if (
                    isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)
                    and (arg.value.lower() == "scan")
                ):
                    lines.append(node.lineno)
    return lines


def test_the_lambda_code_is_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in LAMBDA_CODE}
    assert "shared/adapters/table.py" in names
    assert any(n.startswith("functions/") and n.endswith("/handler.py") for n in names)


@pytest.mark.parametrize("path", LAMBDA_CODE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_scan_in_source(path: Path) -> None:
    source = path.read_text()
    text_hits = [
        f"{path.relative_to(ROOT)}:{source.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
        for m in SCAN_TEXT.finditer(source)
    ]
    ast_hits = [f"{path.relative_to(ROOT)}:{n}" for n in _scan_calls(ast.parse(source))]
    assert not text_hits and not ast_hits, f"DynamoDB Scan on a handler path: {text_hits}{ast_hits}"


@pytest.mark.parametrize(
    ("module", "class_name", "expected"),
    [
        ("shared/adapters/table.py", "DynamoTable", {"get", "transact", "query", "batch_get"}),
    ],
)
def test_dynamodb_code_never_scans(module: str, class_name: str, expected: set[str]) -> None:
    """Every method of the DynamoDB classes (and what their modules call) reads by key or
    Query: the ledger table (every store goes through ``DynamoTable``) and the records
    beside it."""
    tree = ast.parse((ROOT / module).read_text())
    ledger = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == class_name)
    methods = [n for n in ledger.body if isinstance(n, ast.FunctionDef)]
    assert expected <= {m.name for m in methods}
    for method in methods:
        assert not _scan_calls(method), f"{class_name}.{method.name} calls scan"
    called = {
        node.attr
        for m in methods
        for node in ast.walk(m)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "_client"
    }
    allowed = {
        "get_item",
        "put_item",
        "update_item",
        "delete_item",
        "query",
        "get_paginator",
        "batch_get_item",
        "batch_write_item",
        "transact_write_items",
        "exceptions",
    }
    assert called <= allowed, f"{class_name} calls {sorted(called - allowed)}"
    paginated = {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get_paginator"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }
    assert paginated <= {"query"}, f"paginators other than query: {paginated}"


def test_the_checks_catch_a_scan() -> None:
    """The detectors themselves: each spelling of a Scan is caught."""
    for code in (
        "client.scan(TableName='t')",
        "table.scan()",
        "client.get_paginator('scan')",
        "client._make_api_call('Scan', {})",
    ):
        assert _scan_calls(ast.parse(code)) or SCAN_TEXT.search(code), code
    assert not _scan_calls(ast.parse("client.query(TableName='t')"))
