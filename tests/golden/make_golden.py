"""Writes the golden replay outputs of every scenario in ``tests/scenarios``.

``python -m tests.golden.make_golden`` (from the repository root). Run it only when a
change of the replay's results is intended, and say why in the commit: the golden
files stand for the behaviour a restructuring must keep byte for byte.
"""

from __future__ import annotations

import json
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
SCENARIOS = ROOT.parent / "scenarios"


def scenario_names() -> list[str]:
    return sorted(p.name for p in SCENARIOS.glob("*.json"))


def outputs(name: str, emulator_mode: str = "local") -> tuple[str, str]:
    """(the ``--json`` document, the human output) as ``costtracker replay`` prints them
    (``emulator_mode``: ``--emulator``, local or full; the golden files are local's)."""
    from costtracker.alert_preview import alert_list
    from costtracker.render.jobs import job_table
    from costtracker.replay import replay
    from costtracker.scenario import Scenario

    scenario = Scenario.model_validate(json.loads((SCENARIOS / name).read_text()))
    with redirect_stdout(sys.stderr):  # handler output (metrics) is not the replay's
        document: dict[str, Any] = replay(scenario, emulator_mode=emulator_mode)  # type: ignore[arg-type]
    as_json = json.dumps(document, indent=2) + "\n"
    human = job_table(document) + "\n" + alert_list(document) + "\n"
    return as_json, human


def main() -> None:
    for name in scenario_names():
        as_json, human = outputs(name)
        stem = name.removesuffix(".json")
        (ROOT / f"{stem}.replay.json").write_text(as_json)
        (ROOT / f"{stem}.replay.txt").write_text(human)
        print(f"wrote {stem}", file=sys.stderr)


if __name__ == "__main__":
    main()
