"""No module outside ``tests/`` reaches into a library's internals or patches a library.

Local mode runs on moto, boto3 and botocore as published (issue 29): a dependency update
must not break it silently. Outside ``tests/`` a module may import only moto's published
entry points (``ALLOWED_MOTO``), may not name a third-party library's private attribute (``_name``),
may not assign to an attribute of a library module or class it imported, and may not
``mock.patch`` (or ``setattr``) anything but the environment (``mock.patch.dict``).

Allowed moto names: ``moto`` itself (``mock_aws``, the decorator moto documents) and
``moto.server`` (``ThreadedMotoServer``, the documented way to run the server in process).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The project's own packages (anything else imported is a library).
OWN = {"shared", "functions", "costtracker", "bench", "cdk", "tests", "examples"}
SCANNED = ("shared", "functions", "costtracker", "bench", "cdk")
ALLOWED_MOTO = {"moto", "moto.server"}


def _library(module: str) -> bool:
    """A third-party package: one a dependency update changes (the standard library
    comes with the interpreter the project pins)."""
    top = module.split(".", 1)[0]
    return bool(top) and top not in OWN and top not in sys.stdlib_module_names


def violations(source: str, where: str = "<source>") -> list[str]:
    """What ``source`` does to libraries that it may not (one line each)."""
    tree = ast.parse(source)
    found: list[str] = []
    # Names bound to a library module or to something imported from one.
    library_names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "moto" and alias.name not in ALLOWED_MOTO:
                    found.append(f"{where}:{node.lineno}: imports {alias.name}")
                if _library(alias.name):
                    library_names[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "moto" and node.module not in ALLOWED_MOTO:
                found.append(f"{where}:{node.lineno}: imports from {node.module}")
            if _library(node.module):
                for alias in node.names:
                    if alias.name.startswith("_"):
                        found.append(f"{where}:{node.lineno}: imports {node.module}.{alias.name}")
                    library_names[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def library_root(expr: ast.expr) -> str | None:
        while isinstance(expr, ast.Attribute):
            expr = expr.value
        if isinstance(expr, ast.Name) and expr.id in library_names:
            return library_names[expr.id]
        return None

    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and library_root(node.value) is not None
        ):
            found.append(f"{where}:{node.lineno}: reads private {ast.unparse(node)}")
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and library_root(target.value) is not None:
                found.append(f"{where}:{node.lineno}: assigns {ast.unparse(target)}")
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            on_library = bool(node.args) and library_root(node.args[0]) is not None
            if name in ("setattr", "delattr") and on_library:
                found.append(f"{where}:{node.lineno}: {name} on {ast.unparse(node.args[0])}")
            patcher = name in ("patch", "mock.patch", "unittest.mock.patch") or name.endswith(
                ("patch.object", "patch.multiple")
            )
            if patcher:  # mock.patch.dict (the environment) is allowed
                found.append(f"{where}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def scanned_files() -> list[Path]:
    return sorted(
        p for top in SCANNED for p in (ROOT / top).rglob("*.py") if "cdk.out" not in p.parts
    )


def test_no_module_outside_tests_reaches_into_or_patches_a_library() -> None:
    found = [
        v
        for path in scanned_files()
        for v in violations(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert found == [], "\n".join(found)


def test_the_scan_covers_the_project() -> None:
    names = {str(p.relative_to(ROOT)) for p in scanned_files()}
    assert {"costtracker/emulator.py", "costtracker/replay.py", "bench/counter.py"} <= names


def test_the_scan_finds_each_kind_of_reaching_in() -> None:
    fork = """
import copy
import moto.dynamodb.models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.core.responses import BaseResponse
from moto.server import ThreadedMotoServer
from unittest import mock
from unittest.mock import patch
import boto3
import botocore.session
from boto3 import _get_default_session

DynamoDBBackend.transact_write_items = lambda self: None
setattr(dynamodb_models, "copy", copy)
session = boto3._get_default_session()
botocore.session.Session.get_credentials = None
with mock.patch("moto.ec2.models.instances.random_instance_id", return_value="i-1"):
    pass
mock.patch.object(BaseResponse, "get_current_account", None)
patch("botocore.endpoint.Endpoint.make_request")
"""
    found = violations(fork)
    assert any("imports moto.dynamodb.models" in v for v in found)
    assert any("imports from moto.dynamodb.models" in v for v in found)
    assert any("imports from moto.core.responses" in v for v in found)
    assert not any("moto.server" in v for v in found)  # the published server
    assert any("assigns DynamoDBBackend.transact_write_items" in v for v in found)
    assert any("setattr on dynamodb_models" in v for v in found)
    assert any("reads private boto3._get_default_session" in v for v in found)
    assert any("imports boto3._get_default_session" in v for v in found)
    assert any("assigns botocore.session.Session.get_credentials" in v for v in found)
    assert any("random_instance_id" in v for v in found)
    assert any("mock.patch.object(BaseResponse" in v for v in found)
    assert any("patch('botocore.endpoint" in v for v in found)


def test_the_environment_and_the_projects_own_objects_are_not_libraries() -> None:
    allowed = """
import os
from unittest import mock
from shared.app import runtime
from moto import mock_aws

with mock.patch.dict(os.environ, {"A": "1"}):
    pass
runtime._current = None
client.meta.events.register("before-sign.iam.*", print)
server.patch("/jobs")  # a method of one's own named patch
"""
    assert violations(allowed) == []


if __name__ == "__main__":  # pragma: no cover - a quick look from the shell
    for path in scanned_files():
        for v in violations(path.read_text(), str(path.relative_to(ROOT))):
            print(v, file=sys.stderr)
