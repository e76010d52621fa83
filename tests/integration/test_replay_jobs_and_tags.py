"""Jobs and tags, alarms and spot history, by replay, each against a hand calculation.

Day scenario (us-east-1, 2026-11-01, until 2026-11-02 00:00). Prices: c5.24xlarge
$4.08/h, trn1.32xlarge $21.50/h, p5.48xlarge $55.04/h; no volumes.

- llama-pt, grouping tags per key: a CPU data-prep node (c5.24xlarge, team=nlp, no
  project, no cost-center) runs 00:00-02:00 = 2 h x 4.08 = 8.16; its first trn1 node
  (team=nlp, project=llama, cost-center=cc-101) runs 00:04-02:04 = 43.00; a second trn1
  node (project=llama, cost-center=cc-999, no team) runs 00:10-01:10 = 21.50. Total
  72.66. Each key from the earliest instance that carries it: team=nlp (the c5, 00:00),
  project=llama and cost-center=cc-101 (the first trn1, 00:04); cost-center disagrees
  (cc-999): a tag_conflict. The c5 lacks two keys its job has and the second trn1 one:
  tag compliance names them (beside the required keys they lack).
- tie-job, a same-second tie across two accounts: i-0b...0b2 in account 111111111111
  (team=alpha) and i-0b...0b1 in account 222222222222 (team=beta) both run 03:00-04:00
  (2 x 21.50 = 43.00). Ties by instance id alone: ...0b1 < ...0b2, so team=beta, although
  the other instance's account is the lower one.
- idle-p5, alarms on their own metric only: a p5.48xlarge runs 10:00-16:00 = 6 h x
  55.04 = 330.24. The tracker's two alarms (CWAgent nvidia_smi_utilization_gpu and
  AWS/EC2 CPUUtilization, InstanceId, 300 s, Average) go to ALARM at 11:00: idle from
  11:00. At 13:00 an alarm under the tracker's accelerator name on another metric
  (mem_used_percent) goes to OK, and at 14:00 one on the right metric with a 60 s period:
  neither speaks, so idle lasts to the stop: 5 h x 55.04 = 275.20 (had the first spoken,
  2 h = 110.08). The job's c5 node gets alarms named like the tracker's, on the right
  metrics, in ALARM from 10:30; the tracker makes no alarm for a CPU-only node, so they
  change nothing: its 6 h x 4.08 = 24.48 is not idle.
- The day: 72.66 + 43.00 + 330.24 + 24.48 = 470.38. By team: nlp 72.66, beta 43.00,
  (none) 354.72 (idle-p5 has no team); by project: llama 72.66, (none) 397.72; by
  cost-center: cc-101 72.66, (none) 397.72. Each adds up to the day's total.

Month-end scenario: a spot p5.48xlarge runs 2026-11-30 22:00 -> 2026-12-01 02:00 under a
history of four prices (from 11-30 00:00 $20.00, 23:00 $22.00, 12-01 00:30 $18.00, 01:30
$24.00): 1 h x 20 + 1.5 h x 22 + 1 h x 18 + 0.5 h x 24 = 20 + 33 + 18 + 12 = 83.00;
November 30 holds 20 + 22 = 42.00, December 1 11 + 18 + 12 = 41.00.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from costtracker.replay import replay
from costtracker.scenario import Scenario
from tests.aws_events import ACCOUNT, REGION, TRACKER_METRICS, alarm_state_event, ec2_state_event

C5, TRN_A, TRN_B = "i-0a00000000000c501", "i-0a00000000000a001", "i-0a00000000000a002"
TIE_LOW_ACCOUNT, TIE_HIGH_ACCOUNT = "i-0b00000000000b002", "i-0b00000000000b001"
P5, P5_CPU = "i-0c00000000000c001", "i-0c00000000000c002"
ACCOUNT_1, ACCOUNT_2 = "111111111111", "222222222222"
MEMORY = ("CWAgent", "mem_used_percent")  # not what the tracker's alarms watch


def state(eid: str, at: str, iid: str, st: str, account: str = ACCOUNT) -> dict[str, Any]:
    return ec2_state_event(eid, iid, st, at, account=account)


def ours(eid: str, at: str, iid: str, signal: str, value: str, **kw: Any) -> dict[str, Any]:
    """An alarm under the tracker's name (``kw``: another metric, period or statistic)."""
    name = f"costtracker-{iid}-{signal}-low"
    metric = kw.pop("metric", TRACKER_METRICS["gpu" if signal == "accelerator" else "cpu"])
    return alarm_state_event(eid, name, value, at, metric=metric, instance_id=iid, **kw)


DAY = {
    "region": REGION,
    "account": ACCOUNT,
    "prices": {"ec2": {"c5.24xlarge": "4.08", "trn1.32xlarge": "21.50", "p5.48xlarge": "55.04"}},
    "instances": [
        {
            "instance_id": C5,
            "instance_type": "c5.24xlarge",
            "tags": {"training-job": "llama-pt", "team": "nlp"},
        },
        {
            "instance_id": TRN_A,
            "instance_type": "trn1.32xlarge",
            "tags": {
                "training-job": "llama-pt",
                "team": "nlp",
                "project": "llama",
                "cost-center": "cc-101",
            },
        },
        {
            "instance_id": TRN_B,
            "instance_type": "trn1.32xlarge",
            "tags": {"training-job": "llama-pt", "project": "llama", "cost-center": "cc-999"},
        },
        {
            "instance_id": TIE_LOW_ACCOUNT,
            "instance_type": "trn1.32xlarge",
            "account": ACCOUNT_1,
            "tags": {"training-job": "tie-job", "team": "alpha"},
        },
        {
            "instance_id": TIE_HIGH_ACCOUNT,
            "instance_type": "trn1.32xlarge",
            "account": ACCOUNT_2,
            "tags": {"training-job": "tie-job", "team": "beta"},
        },
        {"instance_id": P5, "instance_type": "p5.48xlarge", "tags": {"training-job": "idle-p5"}},
        {
            "instance_id": P5_CPU,
            "instance_type": "c5.24xlarge",
            "tags": {"training-job": "idle-p5"},
        },
    ],
    "events": [
        state("c1", "2026-11-01T00:00:00Z", C5, "running"),
        state("a1", "2026-11-01T00:04:00Z", TRN_A, "running"),
        state("b1", "2026-11-01T00:10:00Z", TRN_B, "running"),
        state("b2", "2026-11-01T01:10:00Z", TRN_B, "terminated"),
        state("c2", "2026-11-01T02:00:00Z", C5, "terminated"),
        state("a2", "2026-11-01T02:04:00Z", TRN_A, "terminated"),
        state("t1", "2026-11-01T03:00:00Z", TIE_LOW_ACCOUNT, "running", ACCOUNT_1),
        state("t2", "2026-11-01T03:00:00Z", TIE_HIGH_ACCOUNT, "running", ACCOUNT_2),
        state("t3", "2026-11-01T04:00:00Z", TIE_LOW_ACCOUNT, "terminated", ACCOUNT_1),
        state("t4", "2026-11-01T04:00:00Z", TIE_HIGH_ACCOUNT, "terminated", ACCOUNT_2),
        state("p1", "2026-11-01T10:00:00Z", P5, "running"),
        state("q1", "2026-11-01T10:00:00Z", P5_CPU, "running"),
        ours("qa", "2026-11-01T10:30:00Z", P5_CPU, "accelerator", "ALARM"),
        ours("qc", "2026-11-01T10:30:00Z", P5_CPU, "cpu", "ALARM"),
        ours("pa", "2026-11-01T11:00:00Z", P5, "accelerator", "ALARM"),
        ours("pc", "2026-11-01T11:00:00Z", P5, "cpu", "ALARM"),
        ours("x1", "2026-11-01T13:00:00Z", P5, "accelerator", "OK", metric=MEMORY),
        ours("x2", "2026-11-01T14:00:00Z", P5, "accelerator", "OK", period=60),
        state("p2", "2026-11-01T16:00:00Z", P5, "terminated"),
        state("q2", "2026-11-01T16:00:00Z", P5_CPU, "terminated"),
    ],
    "until": "2026-11-02T00:00:00Z",
}  # fmt: skip

SPOT = "i-0d00000000000d001"
MONTH_END = {
    "region": REGION,
    "account": ACCOUNT,
    "prices": {
        "spot": {
            "p5.48xlarge": [
                {"from": "2026-11-30T00:00:00Z", "usd": "20.00"},
                {"from": "2026-11-30T23:00:00Z", "usd": "22.00"},
                {"from": "2026-12-01T00:30:00Z", "usd": "18.00"},
                {"from": "2026-12-01T01:30:00Z", "usd": "24.00"},
            ]
        }
    },
    "instances": [
        {
            "instance_id": SPOT,
            "instance_type": "p5.48xlarge",
            "lifecycle": "spot",
            "tags": {"training-job": "spot-run", "team": "vision"},
        }
    ],
    "events": [
        state("s1", "2026-11-30T22:00:00Z", SPOT, "running"),
        state("s2", "2026-12-01T02:00:00Z", SPOT, "terminated"),
    ],
    "until": "2026-12-02T00:00:00Z",
}


@pytest.fixture(scope="module")
def day() -> dict[str, Any]:
    return replay(Scenario.model_validate(DAY))


def job(document: dict[str, Any], job_id: str) -> dict[str, Any]:
    return next(j for j in document["jobs"] if j["job_id"] == job_id)


def test_each_grouping_key_comes_from_the_earliest_instance_carrying_it(
    day: dict[str, Any],
) -> None:
    llama = job(day, "llama-pt")
    assert llama["tags"] == {"team": "nlp", "project": "llama", "cost-center": "cc-101"}
    assert Decimal(llama["cost_usd"]["instance"]) == Decimal("72.66")
    conflicts = [w["detail"] for w in llama["warnings"] if w["kind"] == "tag_conflict"]
    assert len(conflicts) == 1 and "cost-center" in conflicts[0] and "cc-999" in conflicts[0]


def test_instances_lacking_a_key_their_job_has_are_named_in_tag_compliance(
    day: dict[str, Any],
) -> None:
    (summary,) = day["daily_summaries"]
    compliance = {c["instance_id"]: sorted(c["missing"]) for c in summary["tag_compliance"]}
    # Required by default: project, team, owner (no instance here has an owner).
    assert compliance[C5] == ["cost-center", "owner", "project"]
    assert compliance[TRN_B] == ["owner", "team"]
    assert compliance[TRN_A] == ["owner"]


def test_a_same_second_tie_is_broken_by_instance_id_whatever_the_account(
    day: dict[str, Any],
) -> None:
    tie = job(day, "tie-job")
    assert tie["tags"] == {"team": "beta"}
    assert sorted(tie["accounts"]) == [ACCOUNT_1, ACCOUNT_2]
    assert Decimal(tie["cost_usd"]["instance"]) == Decimal("43.00")


def test_an_alarm_watching_anything_else_does_not_speak(day: dict[str, Any]) -> None:
    idle = job(day, "idle-p5")
    assert Decimal(idle["cost_usd"]["instance"]) == Decimal("354.72")  # 330.24 + 24.48
    assert Decimal(idle["cost_usd"]["wasted_idle"]) == Decimal("275.20")


def test_every_daily_breakdown_adds_up_to_the_total(day: dict[str, Any]) -> None:
    (summary,) = day["daily_summaries"]
    assert Decimal(summary["total_usd"]) == Decimal("470.38")
    by_tag = {k: {v: Decimal(x) for v, x in b.items()} for k, b in summary["by_tag"].items()}
    assert by_tag["team"] == {
        "beta": Decimal("43.00"),
        "nlp": Decimal("72.66"),
        "(none)": Decimal("354.72"),
    }
    assert by_tag["project"] == {"llama": Decimal("72.66"), "(none)": Decimal("397.72")}
    assert by_tag["cost-center"] == {"cc-101": Decimal("72.66"), "(none)": Decimal("397.72")}
    for key, breakdown in summary["by_tag"].items():
        added = sum((Decimal(v) for v in breakdown.values()), Decimal(0))
        assert added == Decimal(summary["total_usd"]), key


def test_a_spot_price_history_prices_each_part_of_a_segment_across_a_month_end() -> None:
    document = replay(Scenario.model_validate(MONTH_END))
    spot = job(document, "spot-run")
    assert Decimal(spot["cost_usd"]["instance"]) == Decimal("83.00")
    days = {d["date"]: Decimal(d["total_usd"]) for d in document["daily_summaries"]}
    assert days == {"2026-11-30": Decimal("42.00"), "2026-12-01": Decimal("41.00")}


def test_a_malformed_spot_history_step_is_named() -> None:
    bad = {**MONTH_END, "prices": {"spot": {"p5.48xlarge": [{"from": "soon", "usd": "1"}]}}}
    with pytest.raises(ValueError, match=r"spot\.p5\.48xlarge\[0\]\.from"):
        Scenario.model_validate(bad)
