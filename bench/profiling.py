"""Where the replay's time goes (section 3), apart from the replay run that counts calls
(``bench.replay_bench``): the emulator's request handling timed by operation, and a
cProfile of both sides of the wire (the replay thread and moto's WSGI application),
summed by area of the code."""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent


def _wrap_server(profile: cProfile.Profile) -> Any:
    """Profile moto's WSGI application (the emulator's side of every call)."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    original = DomainDispatcherApplication.__call__

    def profiled(self: Any, environ: Any, start_response: Any) -> Any:
        profile.enable()
        try:
            return original(self, environ, start_response)
        finally:
            profile.disable()

    return mock.patch.object(DomainDispatcherApplication, "__call__", profiled)


class ServerTimer:
    """Wall time of the emulator's request handling, by service and operation (the
    credential scope of the SigV4 header names the service; X-Amz-Target the operation
    of JSON protocols)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.count: dict[str, int] = {}

    def patch(self) -> Any:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication

        original = DomainDispatcherApplication.__call__
        timer = self

        def timed(app: Any, environ: Any, start_response: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(app, environ, start_response)
            finally:
                auth = str(environ.get("HTTP_AUTHORIZATION", ""))
                scope = auth.split("Credential=", 1)[-1].split(",", 1)[0].split("/")
                service = scope[3] if len(scope) > 3 else "?"
                target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
                name = f"{service}.{target.rsplit('.', 1)[-1]}" if target else service
                timer.seconds[name] = timer.seconds.get(name, 0.0) + time.perf_counter() - t0
                timer.count[name] = timer.count.get(name, 0) + 1

        return mock.patch.object(DomainDispatcherApplication, "__call__", timed)

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
    boto3, waiting on the socket) and the emulator's request handling, apart."""
    from costtracker.replay import replay_session
    from costtracker.scenario import Scenario

    scenario = Scenario.model_validate(scenario_dict)
    client, server = cProfile.Profile(), cProfile.Profile()
    with redirect_stdout(sys.stderr), replay_session(scenario) as replayer, _wrap_server(server):
        start = time.perf_counter()
        client.enable()
        try:
            replayer.run()
        finally:
            client.disable()
        wall = time.perf_counter() - start
    out: dict[str, Any] = {"events": len(scenario.events), "wall_s": wall}
    for name, prof in (("client", client), ("server", server)):
        stats = pstats.Stats(prof)
        out[name] = {
            "total_s": round(stats.total_tt, 2),  # type: ignore[attr-defined]
            "by_area_s": _by_area(stats),
            "top_tottime": _top(stats, "tottime", top),
            "top_cumtime": _top(stats, "cumtime", top),
            "top_cumtime_core": _top(
                stats, "cumtime", 3 * top, (str(ROOT / "shared"), str(ROOT / "functions"))
            ),
            # The emulator's side: DynamoDB operations, expression parsing, copies.
            "top_cumtime_dynamodb": _top(
                stats, "cumtime", 3 * top, ("moto/dynamodb/", "costtracker/emulator")
            ),
        }
    return out
