"""``costtracker demo``: replay the bundled example on the emulator, print the job table,
then serve the job-cost API and the dashboard on the loopback until interrupted.

The address is bound before the replay runs (a port in use is said at once), and every
daily summary the replay reports is stored in the ledger, so the API serves each one.
Budgets given with ``--budgets`` are read and checked before the replay too, and set
after it.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from costtracker.errors import CliError

# Package data (pyproject's package-data): the demo runs from an installed package too.
# The example that fills every view a newcomer opens first (docs/cost-rules.md "The demo
# interface"):
# two teams over a fortnight, two jobs still running at its end, the same Llama fine-tune
# on Trainium and on a GPU, an idle accelerator, checkpoints, a spot interruption, and
# its budgets (set after the replay unless another scenario or --budgets is given).
EXAMPLES = Path(__file__).resolve().parent / "examples"
EXAMPLE = EXAMPLES / "two-teams-fortnight.json"
EXAMPLE_BUDGETS = EXAMPLES / "two-teams-fortnight.budgets.json"
LOCAL_ACCOUNT = "123456789012"
_ROLE = re.compile(r"^(?:team:(?P<team>[A-Za-z0-9][A-Za-z0-9._-]{0,63})|(?P<role>finance|admin))$")


def local_identity(spec: str | None, account: str = LOCAL_ACCOUNT) -> tuple[Any, Any]:
    """(LocalIdentity, AccessConfig | None) for ``--as``. No ``--as`` is the explicit local
    admin (``LOCAL_CALLER_ARN``, made an admin by the emulator's configuration, beside the
    scenario's own ``access`` rules); ``admin`` is that same caller with only its rule;
    ``team:NAME`` and ``finance`` make a caller and the one rule that resolves it;
    ``arn:...`` is a caller resolved by the scenario's own ``access`` rules (an unmatched
    ARN is denied: the API fails closed)."""
    from costtracker.local_api import LOCAL_CALLER_ARN, LocalIdentity
    from shared.config.access import AccessConfig, AccessRule

    if spec is None:
        return LocalIdentity(), None
    if spec == "admin":
        rule = AccessRule.model_validate({"arn_pattern": LOCAL_CALLER_ARN, "role": "admin"})
        return LocalIdentity(), AccessConfig(rules=(rule,))
    if spec.startswith("arn:"):
        return LocalIdentity(user_arn=spec, label=f"the caller {spec}"), None
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
    label = f"{f'a member of team {team}' if team else role} ({arn})"
    return LocalIdentity(user_arn=arn, label=label), AccessConfig(rules=(rule,))


def _scenario_access(scenario: Any) -> Any:
    """The scenario's optional ``access`` section (CDK context's shape)."""
    from pydantic import ValidationError

    from shared.config.access import AccessConfig

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

    from shared.app import runtime

    summaries = runtime.summary_store()
    days = [date.fromisoformat(s["date"]) for s in document["daily_summaries"]]
    stored = summaries.get_summaries(days)
    for summary in document["daily_summaries"]:
        day = date.fromisoformat(summary["date"])
        if day not in stored:
            summaries.put_summary(day, summary)


def load_budgets(path: Path) -> list[Any]:
    """Budgets (a JSON list, as PUT /budgets/{id} takes them with their ``budget_id``), or
    a one-line ``CliError`` naming the problem."""
    from pydantic import ValidationError

    from costtracker.errors import validation_summary
    from shared.config.budgets import Budget

    try:
        raw = json.loads(Path(path).read_bytes().decode("utf-8"))
    except FileNotFoundError as exc:
        raise CliError(f"--budgets {path}: no such file; give a JSON list of budgets") from exc
    except OSError as exc:
        raise CliError(f"--budgets {path}: cannot read it ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"--budgets {path}: not a text file; give UTF-8 JSON") from exc
    except json.JSONDecodeError as exc:
        raise CliError(
            f"--budgets {path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from exc
    except RecursionError as exc:
        raise CliError(f"--budgets {path}: JSON nested too deeply to be budgets") from exc
    if not isinstance(raw, list):
        raise CliError(
            f'--budgets {path}: give a JSON list of budgets, e.g. [{{"budget_id": "nlp", '
            '"scope": {"tag": {"team": "nlp"}}, "amount_usd": "500", "period": "month"}]'
        )
    budgets = []
    for n, item in enumerate(raw):
        try:
            budgets.append(Budget.model_validate(item))
        except ValidationError as exc:
            raise CliError(validation_summary(exc, f"--budgets {path}: budget {n}: ")) from exc
    return budgets


def check_budget_tags(budgets: list[Any], path: Path, known: tuple[str, ...]) -> None:
    """As PUT /budgets/{id} checks them: a scope's tag keys must be tracked ones."""
    for budget in budgets:
        try:
            budget.check_tag_keys(known)
        except ValueError as exc:
            raise CliError(f"--budgets {path}: budget {budget.budget_id}: {exc}") from exc


def run_demo(
    host: str,
    port: int,
    serve: bool,
    scenario_path: Path | None,
    verbose: bool,
    as_caller: str | None = None,
    allow_remote: bool = False,
    budgets_path: Path | None = None,
) -> int:
    from costtracker.local_api import RemoteRefused
    from costtracker.local_api import serve as make_server
    from costtracker.render.jobs import job_table
    from costtracker.replay import replay_session, report
    from costtracker.scenario import read_scenario
    from shared.config.ledger import LedgerConfig

    path = scenario_path or EXAMPLE
    if scenario_path is None and budgets_path is None:
        budgets_path = EXAMPLE_BUDGETS
    scenario = read_scenario(path)
    identity, access = local_identity(as_caller, scenario.account)
    access = access or _scenario_access(scenario)
    base = LedgerConfig(access=access) if access is not None else None
    budgets = load_budgets(budgets_path) if budgets_path else []
    if budgets_path and budgets:
        check_budget_tags(budgets, budgets_path, _config_for(scenario, base).known_tag_keys())
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
    if server is not None:  # who the local API says is calling, before the minute of replay
        print(
            f"The local API will answer as {identity.label}; --as team:NAME, finance, "
            "admin or a caller ARN picks another caller.",
            flush=True,
        )
    print(f"Replaying {path.name} on the embedded AWS emulator (moto, 127.0.0.1)...", flush=True)
    try:
        with replay_session(scenario, base_config=base, verbose=verbose) as replayer:
            replayer.run()
            if budgets:
                from shared.app import runtime

                for budget in budgets:  # as PUT /budgets/{id} stores them
                    runtime.budget_store().put_budget(budget)
            document = report(replayer)
            print(job_table(document), flush=True)
            if server is None:
                return 0
            store_reported_summaries(document)
            # The API answers as of the replay's end (its clock stops there); the page says so.
            server.demo_context = {  # type: ignore[attr-defined]
                "mode": "demo",
                "as_of": document["as_of"],
                "scenario": path.name,
            }
            bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
            print(
                f"\nDemo data as of {document['as_of']} (the end of {path.name}): the API "
                "and the dashboard answer as of that moment, not the wall clock.\n"
                f"Dashboard on http://{bound_host}:{bound_port}/\n"
                f"Job-cost API on http://{bound_host}:{bound_port} (OpenAPI at /openapi.json),"
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


def _config_for(scenario: Any, base: Any) -> Any:
    """The ledger configuration the replay will use, or a one-line ``CliError``."""
    from pydantic import ValidationError

    from costtracker.errors import validation_summary
    from costtracker.replay import ledger_config_for

    try:
        return ledger_config_for(scenario, base)
    except ValidationError as exc:
        raise CliError(validation_summary(exc, "the scenario's configuration: ")) from exc
