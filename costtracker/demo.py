"""``costtracker demo``: replay the bundled example on the emulator, print the job table,
then serve the job-cost API on the loopback until interrupted.

The address is bound before the replay runs (a port in use is said at once), and every
daily summary the replay reports is stored in the ledger, so the API serves each one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from costtracker.errors import CliError

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "llama-lora-vs-p5.json"
LOCAL_ACCOUNT = "123456789012"
_ROLE = re.compile(r"^(?:team:(?P<team>[A-Za-z0-9][A-Za-z0-9._-]{0,63})|(?P<role>finance|admin))$")


def local_identity(spec: str | None, account: str = LOCAL_ACCOUNT) -> tuple[Any, Any]:
    """(LocalIdentity, AccessConfig | None) for ``--as``: ``team:NAME``, ``finance`` or
    ``admin`` make a caller and the one rule that resolves it; ``arn:...`` is a caller
    resolved by the scenario's own ``access`` rules (an unmatched ARN is denied)."""
    from costtracker.local_api import LocalIdentity
    from shared.access import AccessConfig, AccessRule

    if spec is None:
        return LocalIdentity(), None
    if spec.startswith("arn:"):
        return LocalIdentity(user_arn=spec, label=spec), None
    found = _ROLE.match(spec)
    if found is None:
        raise CliError(
            f"--as {spec!r}: give team:NAME (e.g. team:nlp), finance, admin or a caller ARN "
            "(arn:aws:sts::...)"
        )
    team = found.group("team")
    role = "team" if team else str(found.group("role"))
    name = f"team-{team}" if team else role
    arn = f"arn:aws:sts::{account}:assumed-role/costtracker-local-{name}/demo"
    rule = AccessRule.model_validate({"arn_pattern": arn, "role": role, "team": team})
    label = f"a member of team {team}" if team else role
    return LocalIdentity(user_arn=arn, label=label), AccessConfig(rules=(rule,))


def _scenario_access(scenario: Any) -> Any:
    """The scenario's optional ``access`` section (CDK context's shape)."""
    from pydantic import ValidationError

    from shared.access import AccessConfig

    raw = (scenario.model_extra or {}).get("access")
    if raw is None:
        return None
    try:
        return AccessConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CliError(f"the scenario's access.{where}: {first['msg']}") from exc


def store_reported_summaries(document: dict[str, Any]) -> None:
    """Put each reported daily summary the scheduled run did not store (a day whose
    summary time falls after ``until``: the replay reports it, the ledger lacked it)."""
    from datetime import date

    from shared import runtime

    ledger = runtime.ledger()
    days = [date.fromisoformat(s["date"]) for s in document["daily_summaries"]]
    stored = ledger.get_summaries(days)
    for summary in document["daily_summaries"]:
        day = date.fromisoformat(summary["date"])
        if day not in stored:
            ledger.put_summary(day, summary)


def run_demo(
    host: str,
    port: int,
    serve: bool,
    scenario_path: Path | None,
    verbose: bool,
    as_caller: str | None = None,
    allow_remote: bool = False,
) -> int:
    from costtracker.local_api import RemoteRefused
    from costtracker.local_api import serve as make_server
    from costtracker.render import job_table
    from costtracker.replay import replay_session, report
    from costtracker.scenario import read_scenario
    from shared.config import LedgerConfig

    path = scenario_path or EXAMPLE
    scenario = read_scenario(path)
    identity, access = local_identity(as_caller, scenario.account)
    access = access or _scenario_access(scenario)
    server = None
    if serve:  # bind first: a taken port or a refused host is said before the replay
        try:
            server = make_server(host, port, identity, allow_remote)
        except RemoteRefused as exc:
            raise CliError(str(exc)) from exc
        except OSError as exc:
            raise CliError(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}): is another demo "
                "running? Stop it or pick another port with --port"
            ) from exc
        if allow_remote:
            print(
                f"WARNING: --allow-remote: the API on {host}:{port} checks no credentials; "
                f"every caller that can reach it acts as {identity.label}.",
                file=sys.stderr,
                flush=True,
            )
    base = LedgerConfig(access=access) if access is not None else None
    print(f"Replaying {path.name} on the embedded AWS emulator (moto, 127.0.0.1)...", flush=True)
    try:
        with replay_session(scenario, base_config=base, verbose=verbose) as replayer:
            replayer.run()
            document = report(replayer)
            print(job_table(document), flush=True)
            if server is None:
                return 0
            store_reported_summaries(document)
            bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
            print(
                f"\nJob-cost API on http://{bound_host}:{bound_port} (OpenAPI at /openapi.json),"
                f" e.g. curl http://{bound_host}:{bound_port}/jobs?from=2026-11-01\n"
                "Local mode: requests are not signed and no credentials are checked; the "
                f"server trusts any caller on this address and answers as {identity.label}. "
                "Ctrl-C stops it.",
                flush=True,
            )
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                print("stopped", file=sys.stderr)
    finally:
        if server is not None:
            server.server_close()
    return 0
