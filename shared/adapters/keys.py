"""Key layout of the ledger table (one table, every record keyed with its account).

| record | pk | sk |
|---|---|---|
| instance pointer (event path: instance -> job) | INST#<account>#<instance> | PTR |
| instance head (bounded) | JOB#<job> | H#I#<account>#<instance> |
| checkpoint object head (bounded) | JOB#<job> | H#C#<account>#<bucket>/<key> |
| sealed segment / idle episode / object version | JOB#<job> | E#<end>#S|I|V#... |
| interruption notice | JOB#<job> | N#<time>#<account>#<instance>#<event> |
| checkpoint step marker | JOB#<job> | K#<step> |
| job rollup (one per job and account) | JOB#<job> | R#<account> |
| cached price | PRICE#<kind>#<region>#<key> | PRICE |
| spot price series point | SPOT#<series> | <time> |
| budget (deleted: a marker) | BUDGETS | <id> |
| budget history | BUDGETS_HISTORY#<id> | <time>#<n> |
| recipient subscription the API made | RECIPIENTS | <address> |
| alert outbox | OUTBOX | <alert_id> (pending-index while unsent) |
| capacity reservation | RES#<account>#<id> | HEAD |
| FSx file system | FSX#<account>#<id> | HEAD |
| training job (SageMaker) | JOB#<job> | H#T#<account>#<name> |
| daily summary | SUMMARY#<date> | SUMMARY |
| reconciliation | RECONCILIATION#<date> | RECONCILIATION |
| unmatched checkpoint object | UNMATCHED | <bucket>/<key> |
| budget action (head) | ACTIONS | <action_id> |
| what a budget action acts on | ACTION#<action_id> | T#<kind>#<account>#<id> |
| planned timer (a crossing, a grace's end) | TIMERS | <budget>#<period>#<what>#<moment> |
| measured utilization of one instance-hour | UTIL#<account>#<instance> | H#<hour> |
| an instance's measured utilization so far | JOB#<job> | U#<account>#<instance> |

Index entries (``ledger_schema.index_entries`` from ``shared.domain.index_facts``):
rollups in the rollups-index (ROLLUPS / <job>#<account>); running, accruing instances and
live reservations in the open-index (OPEN|ACCRUING|RESERVATIONS / <account>#<id>);
records waiting for a price in the unpriced-index (UNPRICED / <kind>#<account>#...);
unsent alerts in the pending-index (PENDING / <time>#<alert>).

A job's records share its partition, so a job is one Query (heads, steps, notices and
rollups sort after the sealed records, which are sorted by their end: a day's records
are one range); the rollups-index holds every rollup under one key, so the job list
and every budget read them in one Query.
"""

from __future__ import annotations

from datetime import UTC, datetime


def part(value: str) -> str:
    """A value safe inside a key: '#' separates parts, so it (and '%') are escaped."""
    return value.replace("%", "%25").replace("#", "%23")


def iso(at: datetime) -> str:
    """``at`` in UTC as ``%Y-%m-%dT%H:%M:%SZ`` (formatted by hand: keys are made for
    every record written, and ``strftime`` is the slow part; years before 1000, which
    ``strftime`` does not pad, still go through it)."""
    at = at.astimezone(UTC)
    if at.year < 1000:
        return at.strftime("%Y-%m-%dT%H:%M:%SZ")
    day = f"{at.year}-{at.month:02d}-{at.day:02d}"
    return f"{day}T{at.hour:02d}:{at.minute:02d}:{at.second:02d}Z"


def pointer(account: str, instance_id: str) -> tuple[str, str]:
    return (f"INST#{account}#{instance_id}", "PTR")


def job_pk(job_id: str) -> str:
    return f"JOB#{part(job_id)}"


def instance_head_sk(account: str, instance_id: str) -> str:
    return f"H#I#{account}#{instance_id}"


def checkpoint_head_sk(account: str, bucket: str, key: str) -> str:
    return f"H#C#{account}#{part(bucket)}/{part(key)}"


def sealed_sk(end: datetime, kind: str, *rest: str) -> str:
    return f"E#{iso(end)}#{kind}#" + "#".join(part(r) for r in rest)


def notice_sk(at: datetime, account: str, instance_id: str, event_id: str) -> str:
    return f"N#{iso(at)}#{account}#{instance_id}#{part(event_id)}"


STEP_PREFIX = "K#"


def step_sk(step: str) -> str:
    return f"{STEP_PREFIX}{part(step)}"


def rollup_sk(account: str) -> str:
    return f"R#{account}"


def rollup_index_sk(job_id: str, account: str) -> str:
    return f"{part(job_id)}#{account}"


def training_head_sk(account: str, name: str) -> str:
    return f"H#T#{account}#{part(name)}"


def reservation_key(account: str, reservation_id: str) -> tuple[str, str]:
    return (f"RES#{account}#{part(reservation_id)}", "HEAD")


def file_system_key(account: str, file_system_id: str) -> tuple[str, str]:
    return (f"FSX#{account}#{part(file_system_id)}", "HEAD")


def action_key(action_id: str) -> tuple[str, str]:
    return ("ACTIONS", part(action_id))


def action_target_key(action_id: str, kind: str, account: str, target_id: str) -> tuple[str, str]:
    return (f"ACTION#{part(action_id)}", f"T#{kind}#{account}#{part(target_id)}")


def attached_denial_key(budget_id: str, action_id: str) -> tuple[str, str]:
    """A deny a budget action attached and has not lifted yet (one per deny action)."""
    return ("DENIALS", f"{part(budget_id)}#{part(action_id)}")


def waiting_stop_key(job_id: str, action_id: str) -> tuple[str, str]:
    """A stop_after_checkpoint waiting for one of this job's checkpoints."""
    return (f"WAITING#{part(job_id)}", part(action_id))


def timer_key(budget_id: str, period_key: str, what: str, moment: datetime) -> tuple[str, str]:
    return ("TIMERS", f"{part(budget_id)}#{period_key}#{part(what)}#{iso(moment)}")
