"""The emulator's UpdateItem, TransactWriteItems and Query fast paths give what moto
itself gives.

Random sequences of the ledger adapter's own updates (numbers added at DynamoDB's
precision, string sets, sets, if-absent sets, removals, every condition the ledger
uses) go through the fast path into one table and through moto's own path into
another; after every step both tables hold the same items and refused the same
updates. Queries on the table and on an index answer the same items in the same order
as moto's own Query. Random transactions of several Puts and Updates (conditions that
hold and that fail, all-or-nothing) leave the same items and the same refusals.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import boto3
import pytest
from moto import mock_aws

from costtracker import (
    emulator_answers,
    emulator_items,
    emulator_queries,
    emulator_transactions,
    emulator_updates,
    emulator_wire,
)
from shared.adapters.items import ItemTooLarge
from shared.adapters.ledger_schema import create_table_request
from shared.adapters.table import (
    Above,
    Absent,
    Below,
    ConditionFailed,
    DynamoTable,
    Put,
    Update,
    VersionIs,
)

NAMES = ("n1", "n2", "total", "version", "last_at", "first_at", "sources", "kind")


@pytest.fixture()
def tables() -> Iterator[tuple[Any, DynamoTable, DynamoTable]]:
    with mock_aws():
        emulator_updates.patch_moto_updates()
        emulator_queries.patch_moto_queries()
        emulator_items.patch_moto_items()
        emulator_transactions.patch_moto_transactions_fast()
        client = boto3.client("dynamodb", region_name="us-east-1")
        for name in ("fast", "moto"):
            client.create_table(**create_table_request(name))
        yield client, DynamoTable(client, "fast"), DynamoTable(client, "moto")


def _random_update(rng: random.Random, pk: str, sk: str) -> Update:
    names = rng.sample(NAMES, rng.randint(1, 5))
    op = Update(pk, sk)
    for name in names:
        kind = rng.choice(("add", "add", "set", "set_if_absent", "remove"))
        if name == "sources":
            if kind in ("set", "set_if_absent"):
                kind = "add"
            if kind == "add":
                sources = ("override", "snapshot", "price-list")
                op.add[name] = {rng.choice(sources) for _ in range(2)}
            else:
                op.remove = [*op.remove, name]
        elif kind == "add":
            digits = rng.choice((1, 6, 24, 30))
            value = Decimal(rng.randrange(-(10**digits), 10**digits)).scaleb(-rng.randint(0, 6))
            op.add[name] = value
        elif kind == "set":
            op.set[name] = rng.choice((Decimal(rng.randint(0, 9)), f"2026-11-0{rng.randint(1, 9)}"))
        elif kind == "set_if_absent":
            op.set_if_absent[name] = rng.choice(("rollup", Decimal(7)))
        else:
            op.remove = [*op.remove, name]
    conditions: list[Any] = []
    roll = rng.random()
    if roll < 0.15:
        conditions.append(Absent())
    elif roll < 0.3:
        conditions.append(VersionIs(rng.randint(0, 3)))
    if rng.random() < 0.4:
        conditions.append(Below("last_at", f"2026-11-0{rng.randint(1, 9)}"))
    if rng.random() < 0.3:
        conditions.append(Above("first_at", f"2026-11-0{rng.randint(1, 9)}"))
    op.conditions = conditions
    return op


def _outcome(table: DynamoTable, op: Update) -> str:
    try:
        table.transact([op])
    except ConditionFailed:
        return "condition failed"
    except Exception as exc:  # a refusal must be the same refusal on both paths
        return type(exc).__name__ + ":" + str(getattr(exc, "response", {}).get("Error", {}))
    return "ok"


def test_random_updates_leave_the_same_items(
    tables: tuple[Any, DynamoTable, DynamoTable], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, fast, moto = tables
    rng = random.Random(20261130)
    keys = [("JOB#a", "R#1"), ("JOB#a", "R#2"), ("JOB#b", "K#7")]
    outcomes: dict[str, int] = {}
    for _ in range(250):
        pk, sk = rng.choice(keys)
        op = _random_update(rng, pk, sk)
        got = _outcome(fast, op)
        with monkeypatch.context() as m:
            m.setattr(emulator_updates, "_actions", lambda *a: None)  # moto's own path
            expected = _outcome(moto, op)
        assert got == expected, op
        outcomes[got] = outcomes.get(got, 0) + 1
        assert fast.get(pk, sk) == moto.get(pk, sk), op
    # The sequence exercised both applied and refused updates.
    assert outcomes.get("ok", 0) > 40 and outcomes.get("condition failed", 0) > 20, outcomes


def test_the_fast_path_keeps_the_item_size_limit(
    tables: tuple[Any, DynamoTable, DynamoTable],
) -> None:
    client, fast, _ = tables
    fast.transact([Update("JOB#a", "R#1", set={"blob": "x" * 300_000})])
    with pytest.raises(ItemTooLarge) as refused:
        fast.transact([Update("JOB#a", "R#1", set={"blob2": "y" * 150_000})])
    cause = refused.value.__cause__
    assert isinstance(cause, client.exceptions.ClientError)
    assert "Item size to update has exceeded" in str(cause)
    assert "blob2" not in (fast.get("JOB#a", "R#1") or {})


def test_queries_answer_as_moto_does(
    tables: tuple[Any, DynamoTable, DynamoTable], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, fast, _ = tables
    rng = random.Random(7)
    for i in range(300):
        item: dict[str, Any] = {
            "pk": f"JOB#{rng.randint(0, 9)}",
            "sk": f"E#{rng.randint(0, 10**6):07d}",
        }
        if rng.random() < 0.4:
            item["gsi_open_pk"] = rng.choice(("OPEN", "OPEN", "ACCRUING"))
            item["gsi_open_sk"] = f"{rng.randint(0, 50):03d}#{i}"
        item |= _random_values(rng)
        fast.transact([Put(item)])
    asks = [
        {"pk": "JOB#3"},
        {"pk": "JOB#4", "begins_with": "E#0"},
        {"pk": "JOB#5", "sk_from": "E#0200000", "sk_to": "E#0700000", "descending": True},
        {"pk": "JOB#6", "sk_from": "E#0500000"},
        {"pk": "JOB#7", "sk_to": "E#0600000", "limit": 3},
        {"pk": "JOB#8", "sk_from": "E#0100000", "attributes": ("sk",)},
        {"pk": "JOB#9", "sk_from": "E#0400000", "descending": True, "limit": 2},
        {"pk": "OPEN", "index": "open-index"},
        {"pk": "OPEN", "index": "open-index", "sk_from": "010", "descending": True, "limit": 7},
        {"pk": "ACCRUING", "index": "open-index"},
        {"pk": "JOB#2", "attributes": ("version", "record", "sources", "absent")},
        {"pk": "OPEN", "index": "open-index", "attributes": ("pk", "sk", "version", "doc")},
    ]
    for ask in asks:
        got = list(fast.query(**ask))
        with monkeypatch.context() as m:
            from moto.dynamodb.models.dynamo_type import Item
            from moto.dynamodb.models.table import Table

            m.setattr(Table, "query", Table.query.__wrapped__)  # moto's own Query
            m.setattr(Item, "project", Item.project.__wrapped__)  # and projection
            expected = list(fast.query(**ask))
        assert got == expected, ask
        assert got, ask


def _random_values(rng: random.Random) -> dict[str, Any]:
    """Attributes of every kind an answer carries: numbers, strings, sets, maps, lists."""
    values: dict[str, Any] = {"version": Decimal(rng.randint(1, 9))}
    if rng.random() < 0.7:
        values["record"] = "r" * rng.randint(0, 3000)
    if rng.random() < 0.5:
        values["sources"] = {f"s{n}" for n in rng.sample(range(9), rng.randint(1, 4))}
    if rng.random() < 0.5:
        values["doc"] = {
            "n": Decimal(rng.randint(0, 10**6)) / 1000,
            "tags": [f"t{n}" for n in range(rng.randint(0, 3))],
            "inner": {"flag": rng.random() < 0.5, "none": None},
        }
    return values


def test_items_are_built_and_refused_as_moto_builds_them(
    tables: tuple[Any, DynamoTable, DynamoTable],
) -> None:
    """The one-pass item build: the same attributes, and the 400 KB refusal at the same
    byte, as moto's attribute-by-attribute build."""
    from boto3.dynamodb.types import TypeSerializer
    from moto.dynamodb.exceptions import ItemSizeTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType, Item

    del tables  # the patches only
    moto_init = Item.__init__.__wrapped__  # type: ignore[attr-defined]
    serialize = TypeSerializer().serialize
    rng = random.Random(11)

    def build(init: Any, attrs: dict[str, Any]) -> Any:
        item = Item.__new__(Item)
        try:
            init(item, DynamoType({"S": "JOB#1"}), DynamoType({"S": "E#1"}), attrs)
        except ItemSizeTooLarge:
            return "refused"
        return {k: v.to_json() for k, v in item.attrs.items()}

    for _ in range(60):
        attrs = {k: serialize(v) for k, v in _random_values(rng).items()}
        assert build(Item.__init__, attrs) == build(moto_init, attrs)
    base = {"pk": {"S": "JOB#1"}, "sk": {"S": "E#1"}}
    fixed = sum(len(k) + len(v["S"]) for k, v in base.items()) + len("blob")
    for extra in (-1, 0, 1):  # around the limit, to the byte
        attrs = base | {"blob": {"S": "x" * (emulator_items.ITEM_LIMIT - fixed + extra)}}
        assert build(Item.__init__, attrs) == build(moto_init, attrs)
    assert build(Item.__init__, base | {"blob": {"S": "x" * 405_000}}) == "refused"


def test_plain_values_match_moto_on_every_kind_of_value() -> None:
    from boto3.dynamodb.types import TypeSerializer
    from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict
    from moto.dynamodb.models.utilities import dynamo_to_dict

    plain = emulator_wire.plain_values(dynamo_to_dict)
    emulator_items.patch_moto_items()
    moto_size = DynamoType.size.__wrapped__  # type: ignore[attr-defined]
    moto_cast = DynamoType.cast_value.fget.__wrapped__  # type: ignore[attr-defined]
    rng = random.Random(5)
    for _ in range(40):
        typed = LimitedSizeDict()
        for name, value in _random_values(rng).items():
            dict.__setitem__(typed, name, DynamoType(TypeSerializer().serialize(value)))
        dict.__setitem__(typed, "blob", DynamoType({"B": "YWJj"}))
        answer = {"Items": [typed, typed], "Count": 2, "ScannedCount": 2, "Flag": True}
        assert plain(answer) == dynamo_to_dict(answer)
        # Each value measured as moto measures it (strings of any script, numbers).
        typed["name"] = DynamoType({"S": rng.choice(("", "ascii", "naïve", "日本語", "😀x"))})
        typed["n"] = DynamoType({"N": str(Decimal(rng.randint(-(10**9), 10**9)) / 1000)})
        for value in typed.values():
            assert value.size() == moto_size(value)
            assert value.cast_value == moto_cast(value)


def _random_put(rng: random.Random, pk: str, sk: str) -> Put:
    item: dict[str, Any] = {"pk": pk, "sk": sk, "kind": rng.choice(("head", "segment"))}
    if rng.random() < 0.5:
        item["version"] = Decimal(rng.randint(0, 3))
    if rng.random() < 0.5:
        item["sources"] = {rng.choice(("override", "snapshot"))}
    conditions: list[Any] = []
    roll = rng.random()
    if roll < 0.3:
        conditions.append(Absent())
    elif roll < 0.4:
        conditions.append(VersionIs(rng.randint(0, 3)))
    if rng.random() < 0.2:
        conditions.append(Below("last_at", f"2026-11-0{rng.randint(1, 9)}"))
    return Put(item, conditions)


def _transact_outcome(table: DynamoTable, ops: list[Any]) -> str:
    try:
        table.transact(ops)
    except ConditionFailed as failed:
        return f"condition failed at {failed.key}"
    except Exception as exc:
        return type(exc).__name__ + ":" + str(getattr(exc, "response", {}).get("Error", {}))
    return "ok"


def test_random_transactions_leave_the_same_items(
    tables: tuple[Any, DynamoTable, DynamoTable], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, fast, moto = tables
    rng = random.Random(20261201)
    keys = [("JOB#a", "R#1"), ("JOB#a", "R#2"), ("JOB#b", "K#7"), ("JOB#b", "K#8")]
    taken = []
    holds = emulator_transactions.holds
    monkeypatch.setattr(emulator_transactions, "holds", lambda *a: taken.append(1) or holds(*a))
    outcomes: dict[str, int] = {}
    for _ in range(250):
        chosen = rng.sample(keys, rng.randint(2, 3))
        ops = [
            _random_put(rng, pk, sk) if rng.random() < 0.35 else _random_update(rng, pk, sk)
            for pk, sk in chosen
        ]
        for op in ops:
            if rng.random() < 0.6:
                op.conditions = []  # most entries of a ledger transaction are unconditional
        got = _transact_outcome(fast, ops)
        with monkeypatch.context() as m:
            m.setattr(emulator_transactions, "ENABLED", False)  # moto's own path
            m.setattr(emulator_updates, "_actions", lambda *a: None)
            expected = _transact_outcome(moto, ops)
        assert got == expected, ops
        outcomes[got.split(" at ")[0]] = outcomes.get(got.split(" at ")[0], 0) + 1
        for pk, sk in keys:
            assert fast.get(pk, sk) == moto.get(pk, sk), ops
    assert outcomes.get("ok", 0) > 40 and outcomes.get("condition failed", 0) > 40, outcomes
    assert len(taken) > 400  # the fast path answered (conditions checked per entry)


def test_a_transaction_over_the_size_limit_writes_nothing(
    tables: tuple[Any, DynamoTable, DynamoTable],
) -> None:
    _, fast, _ = tables
    fast.transact([Update("JOB#a", "R#1", set={"blob": "x" * 300_000})])
    with pytest.raises(ItemTooLarge):
        fast.transact(
            [
                Update("JOB#a", "R#2", set={"n1": Decimal(1)}),
                Update("JOB#a", "R#1", set={"blob2": "y" * 150_000}),
            ]
        )
    assert fast.get("JOB#a", "R#2") is None
    assert "blob2" not in (fast.get("JOB#a", "R#1") or {})


@pytest.mark.parametrize("name", ["spot_checkpoints.json", "idle_alarms.json", "two_accounts.json"])
def test_json_wire_matches_moto_on_every_call_of_a_replay(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every DynamoDB request and answer of a whole replay, read and written both ways,
    and the replay's output still its golden file."""
    from costtracker import emulator_wire
    from tests.golden.make_golden import ROOT, outputs

    monkeypatch.setattr(emulator_wire, "VERIFY", True)
    monkeypatch.setattr(emulator_wire, "MISMATCHES", [])
    before = dict(emulator_wire.ANSWERED)
    as_json, _ = outputs(name)
    assert emulator_wire.MISMATCHES == []
    assert as_json == (ROOT / name.replace(".json", ".replay.json")).read_text()
    print(name, {k: emulator_wire.ANSWERED[k] - before[k] for k in before})
    assert emulator_wire.ANSWERED["requests"] - before["requests"] > 20
    assert emulator_wire.ANSWERED["answers"] - before["answers"] > 20


def test_answers_of_other_services_are_moto_s_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """CloudWatch, EC2 and S3 answers with the alias names kept: the same as moto's."""
    from moto.core.serialize import BaseJSONSerializer, ResponseSerializer, XFormedAttributePicker

    with mock_aws():
        emulator_answers.patch_moto_answers()
        cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
        ec2 = boto3.client("ec2", region_name="us-east-1")
        s3 = boto3.client("s3", region_name="us-east-1")
        for n in range(30):
            cloudwatch.put_metric_alarm(
                AlarmName=f"costtracker-i-{n:017x}-cpu-low",
                Namespace="AWS/EC2",
                MetricName="CPUUtilization",
                Dimensions=[{"Name": "InstanceId", "Value": f"i-{n:017x}"}],
                Statistic="Average",
                Period=300,
                EvaluationPeriods=3,
                DatapointsToAlarm=3,
                Threshold=5.0,
                ComparisonOperator="LessThanThreshold",
                TreatMissingData="missing",
                ActionsEnabled=False,
                Tags=[{"Key": "costtracker:instance-id", "Value": f"i-{n:017x}"}],
            )
        image = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
        ec2.run_instances(
            ImageId=image,
            MinCount=3,
            MaxCount=3,
            InstanceType="trn1.32xlarge",
            TagSpecifications=[
                {"ResourceType": "instance", "Tags": [{"Key": "job", "Value": "j"}]}
            ],
        )
        s3.create_bucket(Bucket="checkpoints")
        s3.put_object(Bucket="checkpoints", Key="runs/j/step-1/a.pt", Body=b"x")

        def answers() -> list[Any]:
            out = [
                cloudwatch.describe_alarms(AlarmNamePrefix="costtracker-"),
                ec2.describe_instances(),
                ec2.describe_volumes(),
                s3.list_objects_v2(Bucket="checkpoints"),
            ]
            for answer in out:
                answer.pop("ResponseMetadata", None)
            return out

        def moto_s_own() -> list[Any]:
            with monkeypatch.context() as m:
                own_names = XFormedAttributePicker.get_possible_keys.__wrapped__  # type: ignore[attr-defined]
                own_value = ResponseSerializer.get_value.__wrapped__  # type: ignore[attr-defined]
                own_structure = BaseJSONSerializer._serialize_type_structure.__wrapped__  # type: ignore[attr-defined]
                m.setattr(XFormedAttributePicker, "get_possible_keys", own_names)
                m.setattr(ResponseSerializer, "get_value", own_value)
                m.setattr(BaseJSONSerializer, "_serialize_type_structure", own_structure)
                return answers()

        emulator_answers._NAMES.clear()
        emulator_answers._PARTS.clear()
        cached = answers()
        assert emulator_answers._NAMES and len(emulator_answers._PARTS) == 30  # kept, used
        assert answers() == cached == moto_s_own()
        assert len(cached[0]["MetricAlarms"]) == 30
        # Alarms change: a new state, actions enabled, one made anew, one deleted, one new.
        names = [a["AlarmName"] for a in cached[0]["MetricAlarms"]]
        cloudwatch.set_alarm_state(AlarmName=names[0], StateValue="ALARM", StateReason="idle")
        cloudwatch.enable_alarm_actions(AlarmNames=names[1:3])
        made_anew = dict(cached[0]["MetricAlarms"][3])
        cloudwatch.put_metric_alarm(
            **{k: made_anew[k] for k in ("AlarmName", "Namespace", "MetricName", "Dimensions",
                                         "Statistic", "Period", "EvaluationPeriods",
                                         "ComparisonOperator")},
            Threshold=7.5,
        )  # fmt: skip
        cloudwatch.delete_alarms(AlarmNames=[names[4]])
        cloudwatch.put_metric_alarm(
            AlarmName="costtracker-i-00000000000000fff-accelerator-low",
            Namespace="NeuronMonitor",
            MetricName="neuroncore_utilization",
            Statistic="Average",
            Period=300,
            EvaluationPeriods=3,
            Threshold=10.0,
            ComparisonOperator="LessThanThreshold",
        )
        changed = answers()
        assert changed == moto_s_own() and changed != cached
        by_name = {a["AlarmName"]: a for a in changed[0]["MetricAlarms"]}
        assert by_name[names[0]]["StateValue"] == "ALARM"
        assert by_name[names[1]]["ActionsEnabled"] and by_name[names[3]]["Threshold"] == 7.5
        assert names[4] not in by_name and len(by_name) == 30
