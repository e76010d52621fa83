"""Every scenario in ``tests/scenarios`` replays to its golden output, byte for byte, in
both emulator modes: the ledger's table in memory (the default) and on moto
(``--emulator full``). CI runs this file on the pinned moto and on the lowest moto of
the declared range (``.ci/run``).

The golden files (``tests/golden``) were taken before the codebase's restructuring; a
refactoring keeps them identical. When a change of results is intended, regenerate
them with ``python -m tests.golden.make_golden`` and say why in the commit.
"""

from __future__ import annotations

import pytest

from tests.golden.make_golden import ROOT, outputs, scenario_names


@pytest.mark.parametrize("emulator_mode", ["local", "full"])
@pytest.mark.parametrize("name", scenario_names())
def test_replay_output_is_byte_identical_to_its_golden_file(name: str, emulator_mode: str) -> None:
    as_json, human = outputs(name, emulator_mode)
    stem = name.removesuffix(".json")
    where = f"{stem} (--emulator {emulator_mode})"
    assert as_json == (ROOT / f"{stem}.replay.json").read_text(), f"{where}: --json differs"
    assert human == (ROOT / f"{stem}.replay.txt").read_text(), f"{where}: human output differs"


def test_every_scenario_has_golden_files() -> None:
    stems = {n.removesuffix(".json") for n in scenario_names()}
    golden = {p.name.split(".replay.")[0] for p in ROOT.glob("*.replay.*")}
    assert stems == golden
