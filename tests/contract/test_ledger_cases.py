"""The ledger's own cases through the real services, over both tables: the hibernated
spot instance the sweep once crashed on, the configured job tag key, index entries that
follow a head through its life, and items that stay small whatever the history."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from shared.adapters import keys
from shared.adapters import ledger_schema as schema
from shared.adapters.items import item_size
from shared.adapters.table import Table
from shared.config.ledger import LedgerConfig, PriceOverrides, TrackingConfig
from shared.domain.instance import InstanceProfile, Volume
from shared.services.instances import Outcome, record_spot_notice, record_state_change
from shared.services.job_view import get_job_cost
from shared.services.sweep import sweep_missed_events
from tests.contract.conftest import ACCOUNT, REGION, T0, Ledger, fresh, ledger_over
from tests.support import object_event

SPOT = LedgerConfig(
    live_prices=False,
    prices=PriceOverrides(
        spot={"p5.48xlarge": Decimal(36)},
        ec2={"p5.48xlarge": Decimal(90), "c5.xlarge": Decimal("0.17")},
        ebs_gb_month={"gp3": Decimal("0.08")},
    ),
)
HIB = InstanceProfile(
    instance_id="i-0000000000000abcd",
    instance_type="p5.48xlarge",
    region=REGION,
    account=ACCOUNT,
    lifecycle="spot",
    tags={"training-job": "hib"},
    volumes=(Volume(volume_id="vol-1", size_gib=100),),
)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def state(ledger: Ledger, iid: str, eid: str, seconds: int, name: str) -> Outcome:
    ledger.clock.advance_to(at(seconds))
    return record_state_change(
        ledger.deps,
        event_id=eid,
        at=at(seconds),
        instance_id=iid,
        state=name,
        region=REGION,
        account=ACCOUNT,
    )


def hibernated(table: Table) -> Ledger:
    """Two segments: 0-300 s, then 400 s on with a hibernate warning at 880 s and
    ``stopping`` at 1000 s (a hibernating spot stop bills through stopping)."""
    ledger = ledger_over(table, HIB, config=SPOT)
    state(ledger, HIB.instance_id, "r1", 0, "running")
    state(ledger, HIB.instance_id, "s1", 300, "stopped")
    state(ledger, HIB.instance_id, "r2", 400, "running")
    ledger.clock.advance_to(at(880))
    record_spot_notice(
        ledger.deps,
        event_id="n1",
        at=at(880),
        instance_id=HIB.instance_id,
        action="hibernate",
        region=REGION,
        account=ACCOUNT,
    )
    state(ledger, HIB.instance_id, "s2", 1000, "stopping")
    return ledger


OPEN = schema.OPEN_INDEX.name


def swept(table: Table) -> list[str]:
    return [str(i["instance_id"]) for i in table.query("OPEN", index=OPEN)]


def test_the_sweep_closes_a_hibernated_spot_instance_whose_stop_never_came(table: Table) -> None:
    ledger = hibernated(table)
    assert swept(table) == [HIB.instance_id]  # still billing through stopping
    ledger.fleet.now_states[HIB.instance_id] = ("stopped", at(1300))
    ledger.clock.advance_to(at(3600))
    later = fresh(ledger)  # the sweep's own container: it reads the head from the index
    result = sweep_missed_events(later.deps, ledger.fleet, REGION)  # type: ignore[arg-type]
    assert (result.closed, result.failed, result.opened) == ([HIB.instance_id], [], [])
    cost = get_job_cost(fresh(ledger).deps, "hib", at(3600))
    assert cost.billed_seconds == 300 + 900
    assert cost.instance_usd == Decimal(1200) * 36 / 3600
    assert swept(table) == []
    accruing = [str(i["instance_id"]) for i in table.query("ACCRUING", index=OPEN)]
    assert accruing == [HIB.instance_id]  # its volume still accrues
    again = sweep_missed_events(fresh(ledger).deps, ledger.fleet, REGION)  # type: ignore[arg-type]
    assert (again.closed, again.failed) == ([], [])


def test_a_hibernated_spot_instance_that_stopped_is_left_alone_by_the_sweep(table: Table) -> None:
    ledger = hibernated(table)
    state(ledger, HIB.instance_id, "s3", 1300, "stopped")
    ledger.fleet.now_states[HIB.instance_id] = ("stopped", at(1300))
    result = sweep_missed_events(fresh(ledger).deps, ledger.fleet, REGION)  # type: ignore[arg-type]
    assert (result.closed, result.failed, result.opened) == ([], [], [])
    cost = get_job_cost(fresh(ledger).deps, "hib", at(2000))
    assert cost.billed_seconds == 1200 and cost.interruptions == 1


def _profile(iid: str, tags: dict[str, str]) -> InstanceProfile:
    return InstanceProfile(
        instance_id=iid, instance_type="c5.xlarge", region=REGION, account=ACCOUNT, tags=tags
    )


def test_only_the_configured_job_tag_key_makes_a_job(table: Table) -> None:
    tagged = _profile("i-00000000000000001", {"training-job": "llama"})
    other_key = _profile("i-00000000000000002", {"project": "llama", "team": "nlp"})
    ledger = ledger_over(table, tagged, other_key, config=SPOT)
    assert state(ledger, tagged.instance_id, "a", 0, "running").job_id == "llama"
    outcome = state(ledger, other_key.instance_id, "b", 0, "running")
    assert (outcome.result, outcome.job_id) == ("untracked", None)
    pointer = fresh(ledger).deps.instances.pointer(ACCOUNT, other_key.instance_id)
    assert pointer is not None and pointer.job_id is None
    # A tracked family with only the other key is its own untagged job, never "llama".
    gpu = _profile("i-00000000000000004", {"project": "llama"})
    gpu = gpu.model_copy(update={"instance_type": "g5.xlarge"})
    ledger.fleet.profiles[gpu.instance_id] = gpu
    gpu_job = state(ledger, gpu.instance_id, "g", 0, "running").job_id
    assert gpu_job == f"untagged:{gpu.instance_id}"
    state(ledger, gpu.instance_id, "g2", 30, "terminated")
    # The sweep sees both running: it opens nothing for the other tag key either.
    for profile in (tagged, other_key):
        ledger.fleet.now_states[profile.instance_id] = ("running", None)
        ledger.fleet.launched[profile.instance_id] = T0
    result = sweep_missed_events(fresh(ledger).deps, ledger.fleet, REGION)  # type: ignore[arg-type]
    assert (result.opened, result.closed, result.failed) == ([], [], [])
    assert [r["job_id"] for r in fresh(ledger).deps.rollups.all()] == ["llama", gpu_job]
    assert swept(table) == [tagged.instance_id]

    # With ``project`` configured instead, the same tags make the other instance the job.
    config = SPOT.model_copy(update={"tracking": TrackingConfig(job_tag_keys=("project",))})
    other = ledger_over(table, _profile("i-00000000000000003", {"project": "gpt"}), config=config)
    assert state(other, "i-00000000000000003", "c", 10, "running").job_id == "gpt"
    assert state(other, "i-00000000000000003", "c", 10, "running").result == "duplicate"


def test_index_entries_follow_a_head_through_its_life(table: Table) -> None:
    unknown = _profile("i-00000000000000009", {"training-job": "odd"})
    unknown = unknown.model_copy(update={"instance_type": "x9.unpriced"})
    ledger = ledger_over(table, unknown, config=SPOT)
    iid = unknown.instance_id

    def unpriced() -> list[str]:
        index = schema.UNPRICED_INDEX.name
        return [str(i["gsi_unpriced_sk"]) for i in table.query(schema.UNPRICED, index=index)]

    state(ledger, iid, "r", 0, "running")
    assert swept(table) == [iid] and unpriced() == [f"instance#{ACCOUNT}#{iid}"]
    state(ledger, iid, "t", 60, "terminated")
    assert swept(table) == []
    assert list(table.query("ACCRUING", index=schema.OPEN_INDEX.name)) == []  # no volumes
    # Both the head and its sealed segment still wait for a price.
    assert unpriced() == [f"instance#{ACCOUNT}#{iid}", f"segment#{ACCOUNT}#{iid}"]


def test_items_stay_small_and_costs_exact_after_200_cycles(table: Table) -> None:
    ledger = ledger_over(table, HIB.model_copy(update={"lifecycle": "on-demand"}), config=SPOT)
    for n in range(200):  # 200 cycles of 100 s running, 50 s stopped
        state(ledger, HIB.instance_id, f"r{n}", 150 * n, "running")
        state(ledger, HIB.instance_id, f"s{n}", 150 * n + 100, "stopped")
    items = list(table.query(keys.job_pk("hib")))
    assert len(items) > 150  # the segments that left the head were sealed, one item each
    assert max(item_size(i) for i in items) < 16 * 1024
    cost = get_job_cost(fresh(ledger).deps, "hib", at(30_000))
    assert cost.billed_seconds == 200 * 100
    assert cost.instance_usd == Decimal(20_000) * 90 / 3600


def test_open_heads_are_listed_from_keys_and_versions_and_read_only_when_not_held(
    table: Table,
) -> None:
    """The sweeps list the open heads by key and version; a store that wrote a head
    uses its own copy, a fresh one (or one whose copy is stale) reads it, in one batch."""
    profiles = [_profile(f"i-0000000000000010{n}", {"training-job": f"j{n}"}) for n in range(3)]
    ledger = ledger_over(table, *profiles, config=SPOT)
    for n, profile in enumerate(profiles):
        state(ledger, profile.instance_id, f"r{n}", n, "running")
    writer = ledger.deps.instances
    held = {h.instance_id: h for h in writer.open_heads()}
    assert sorted(held) == sorted(p.instance_id for p in profiles)
    assert all(held[p.instance_id] is writer.head(f"j{n}", ACCOUNT, p.instance_id)
               for n, p in enumerate(profiles))  # fmt: skip
    # Another container changes one head: the writer's copy of it is stale.
    other = fresh(ledger)
    state(other, profiles[0].instance_id, "s0", 100, "stopped")
    state(other, profiles[1].instance_id, "r1-again", 110, "running")  # a new transition
    newer = other.deps.instances.head("j1", ACCOUNT, profiles[1].instance_id)
    assert newer is not None and newer.version > held[profiles[1].instance_id].version
    read: list[tuple[str, str]] = []
    batch_get = table.batch_get

    def counted(keys: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
        read.extend(keys)
        return batch_get(keys)

    table.batch_get = counted  # type: ignore[method-assign]
    listed = {h.instance_id: h for h in writer.open_heads()}
    assert profiles[0].instance_id not in listed  # it stopped: out of the index
    assert listed[profiles[2].instance_id] is held[profiles[2].instance_id]
    assert listed[profiles[1].instance_id].version == newer.version
    assert read == [(keys.job_pk("j1"), keys.instance_head_sk(ACCOUNT, profiles[1].instance_id))]
    reread = {h.instance_id: h for h in fresh(ledger).deps.instances.open_heads()}
    assert {k: h.version for k, h in reread.items()} == {k: h.version for k, h in listed.items()}
    assert {k: h.model_dump() for k, h in reread.items()} == {
        k: h.model_dump() for k, h in listed.items()
    }


def test_a_checkpoint_head_kept_after_a_write_equals_the_stored_one(table: Table) -> None:
    """The writer keeps the head it wrote without reading it back: writes, overwrites
    out of order, a duplicate and a deletion leave its copy equal to a fresh read."""
    ledger = ledger_over(table, config=SPOT)
    key = "runs/ck/step-7/model.pt"
    events = [("w1", 10, 2**30), ("w2", 70, 3 * 2**29), ("w0", 5, 2**20), ("w2", 70, 3 * 2**29),
              ("d1", 130, None), ("w3", 200, 12_345)]  # fmt: skip
    for event_id, seconds, size in events:
        ledger.clock.advance_to(max(ledger.clock.now(), at(seconds)))
        object_event(
            ledger, event_id, at(seconds), key, size, bucket="ckpt", sequencer=f"{seconds:016X}"
        )
        kept = ledger.checkpoints.head("ck", ACCOUNT, "ckpt", key, read=False)
        stored = fresh(ledger).checkpoints.head("ck", ACCOUNT, "ckpt", key)
        assert kept is not None and stored is not None
        assert kept == stored and kept.model_dump_json() == stored.model_dump_json()
