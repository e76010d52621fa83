"""moto's declared range (pyproject's ``local`` extra) and the lock's pin, for CI.

``python .ci/moto_range.py lowest`` prints the range's lowest version, ``pinned`` the
lock's; anything else prints both. Fails when the extra declares no ``>=`` bound.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def declared() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (spec,) = [d for d in project["optional-dependencies"]["local"] if d.startswith("moto")]
    return str(spec)


def lowest() -> str:
    match = re.search(r">=\s*([0-9][0-9.]*)", declared())
    if match is None:
        raise SystemExit(f"moto's range declares no lowest version: {declared()!r}")
    return match.group(1)


def pinned() -> str:
    match = re.search(r"^moto==(\S+)$", (ROOT / "requirements" / "dev.lock").read_text(), re.M)
    if match is None:
        raise SystemExit("requirements/dev.lock pins no moto")
    return match.group(1)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    print({"lowest": lowest, "pinned": pinned}.get(what, lambda: f"{declared()} {pinned()}")())
