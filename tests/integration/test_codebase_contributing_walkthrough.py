"""CONTRIBUTING.md's "Add a function" walk-through, followed to the letter.

The files and the catalog entry are taken from CONTRIBUTING.md itself (the code blocks
marked ``<!-- walkthrough: ... -->``), written into a copy of the repository; the new
function's test and the catalog's tests run there, and the stack is synthesized there
with the new function in it. A step of the page that no longer works fails here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PAGE = REPO_ROOT / "CONTRIBUTING.md"
BLOCK = re.compile(
    r"<!-- walkthrough: (?P<target>\S+) -->\s*\n\s*```python\n(?P<code>.*?)```", re.S
)
CATALOG = Path("shared/app/functions.py")
FUNCTIONS_START = "FUNCTIONS: tuple[Function, ...] = (\n"
COPIED = (
    "shared",
    "functions",
    "cdk",
    "costtracker",
    "tests",
    "requirements",
    "cdk.json",
    "pyproject.toml",
)


def walkthrough_blocks() -> dict[str, str]:
    """Each marked block of the page, dedented, by its target (a path or ``catalog``)."""
    blocks = {m["target"]: textwrap.dedent(m["code"]) for m in BLOCK.finditer(PAGE.read_text())}
    assert {"catalog", "functions/hello_tick/handler.py"} <= set(blocks)
    return blocks


def follow(copy: Path, blocks: dict[str, str]) -> None:
    """Do what the page says: write its files, add its entry to ``FUNCTIONS``."""
    for target, code in blocks.items():
        if target == "catalog":
            catalog = copy / CATALOG
            text = catalog.read_text()
            assert FUNCTIONS_START in text, "the page says to add to FUNCTIONS: it moved"
            entry = textwrap.indent(code, "    ")
            catalog.write_text(text.replace(FUNCTIONS_START, FUNCTIONS_START + entry, 1))
        else:
            path = copy / target
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code)


def run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=600
    )


SYNTH = """
import json, sys
from cdk.app import build_app
from aws_cdk.assertions import Template
context = json.load(open("cdk.json"))["context"]
context.update({"aws:cdk:bundling-stacks": [], "aws:cdk:enable-path-metadata": True})
_, stack, _ = build_app(context, outdir=sys.argv[1], nag=False)
print(json.dumps(Template.from_stack(stack).to_json()))
"""


def test_a_newcomer_adds_a_scheduled_function_end_to_end(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    for name in COPIED:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, copy / name)
    follow(copy, walkthrough_blocks())

    tests = run(
        copy,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-n",
        "0",
        "tests/unit/test_hello_tick.py",
        "tests/unit/test_functions_catalog.py",
    )
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-3000:]

    synth = run(copy, "-c", SYNTH, str(tmp_path / "cdk.out"))
    assert synth.returncode == 0, synth.stderr[-3000:]
    resources = json.loads(synth.stdout.splitlines()[-1])["Resources"]
    functions = [
        r
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::Function"
        and r["Properties"].get("Description") == "costtracker: name the finance day of each hour"
    ]
    assert len(functions) == 1
    assert functions[0]["Properties"]["Timeout"] == 60
    hourly = [
        r
        for r in resources.values()
        if r["Type"] == "AWS::Events::Rule"
        and r["Properties"].get("Description") == "costtracker: name the finance day of each hour"
    ]
    assert len(hourly) == 1 and hourly[0]["Properties"]["ScheduleExpression"] == "cron(0 * * * ? *)"
