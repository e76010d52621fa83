"""Where the replay's time goes (section 3), apart from the replay run that counts calls
(``bench.replay_bench``): the AWS calls' round trips timed by operation (botocore's
``before-call`` / ``after-call`` event hooks), and a cProfile of the replay thread
summed by area of the code. The emulator's own side is not profiled: that would mean
patching moto's WSGI application."""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class CallTimer:
    """Wall time of each AWS call as the client sees it (request, the emulator's work,
    response), by service and operation, from botocore's published event hooks on the
    session the handlers' clients come from."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.count: dict[str, int] = {}
        self._started: list[float] = []
        self.paused = False

    def _before(self, **_: Any) -> None:
        self._started.append(time.perf_counter())

    def _after(self, event_name: str, **_: Any) -> None:
        if not self._started:
            return
        elapsed = time.perf_counter() - self._started.pop()
        if self.paused:
            return
        name = ".".join(event_name.split(".")[1:3])
        self.seconds[name] = self.seconds.get(name, 0.0) + elapsed
        self.count[name] = self.count.get(name, 0) + 1

    def register(self, events: Any) -> None:
        events.register("before-call.*.*", self._before)
        events.register("after-call.*.*", self._after)

    def unregister(self, events: Any) -> None:
        events.unregister("before-call.*.*", self._before)
        events.unregister("after-call.*.*", self._after)

    def table(self) -> list[dict[str, Any]]:
        return [
            {
                "operation": k,
                "calls": self.count[k],
                "total_s": round(v, 3),
                "mean_ms": round(v / self.count[k] * 1000, 2),
            }
            for k, v in sorted(self.seconds.items(), key=lambda kv: -kv[1])
        ]


def _top(stats: pstats.Stats, key: str, n: int, only: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    rows = []
    entries = {
        k: v
        for k, v in stats.stats.items()  # type: ignore[attr-defined]
        if not only or any(part in k[0] for part in only)
    }
    ranked = sorted(
        entries.items(), key=lambda kv: kv[1][2 if key == "tottime" else 3], reverse=True
    )
    for (filename, line, name), (_cc, ncalls, tottime, cumtime, _callers) in ranked[:n]:
        rel = filename
        for prefix in (str(ROOT) + "/", str(Path(sys.prefix)) + "/lib/python3.11/site-packages/"):
            rel = rel.replace(prefix, "")
        rows.append(
            {
                "function": f"{rel}:{line}({name})",
                "calls": ncalls,
                "tottime_s": round(tottime, 3),
                "cumtime_s": round(cumtime, 3),
            }
        )
    return rows


def _by_area(stats: pstats.Stats) -> dict[str, float]:
    """Own (tottime) seconds by area of the code."""
    areas = {
        "shared/domain": "core: domain",
        "shared/adapters": "core: adapters",
        "shared/services": "core: services",
        "shared/": "core: other shared",
        "functions/": "handlers",
        "costtracker/": "replay driver",
        "bench/": "bench hooks",
        "pydantic": "pydantic",
        "aws_lambda_powertools": "powertools",
        "botocore": "botocore",
        "boto3": "boto3",
        "urllib3": "urllib3/http",
        "http/client": "urllib3/http",
        "moto": "moto",
        "werkzeug": "werkzeug",
        "socket": "socket wait",
        "<method 'recv_into'": "socket wait",
        "json": "json",
        "logging": "logging",
    }
    totals: dict[str, float] = {}
    for (filename, _line, name), (_cc, _n, tottime, _cum, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{filename} {name}"
        area = "other"
        for needle, label in areas.items():
            if needle in where:
                area = label
                break
        totals[area] = totals.get(area, 0.0) + tottime
    return dict(sorted(((k, round(v, 2)) for k, v in totals.items()), key=lambda kv: -kv[1]))


def profile_replay(scenario_dict: dict[str, Any], top: int = 15) -> dict[str, Any]:
    """cProfile of a replay (no counting hooks): the driver's thread (handlers, services,
    the in-memory table, boto3, waiting on the emulator's socket)."""
    from costtracker.replay import replay_session
    from costtracker.scenario import Scenario

    scenario = Scenario.model_validate(scenario_dict)
    client = cProfile.Profile()
    with redirect_stdout(sys.stderr), replay_session(scenario) as replayer:
        start = time.perf_counter()
        client.enable()
        try:
            replayer.run()
        finally:
            client.disable()
        wall = time.perf_counter() - start
    out: dict[str, Any] = {"events": len(scenario.events), "wall_s": wall}
    for name, prof in (("client", client),):
        stats = pstats.Stats(prof)
        out[name] = {
            "total_s": round(stats.total_tt, 2),  # type: ignore[attr-defined]
            "by_area_s": _by_area(stats),
            "top_tottime": _top(stats, "tottime", top),
            "top_cumtime": _top(stats, "cumtime", top),
            "top_cumtime_core": _top(
                stats, "cumtime", 3 * top, (str(ROOT / "shared"), str(ROOT / "functions"))
            ),
        }
    return out
