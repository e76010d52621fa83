"""Writes many_accounts.json (rerun to regenerate): the tracker (account 123456789012,
us-east-1) acting for resources in their own accounts and regions.

- member-ft: one trn1.32xlarge (M1, $21.50/h) of member account 222222222222 in
  eu-west-1, opted in to auto-stop. Its two alarms live in that account and region; they
  go to ALARM at 11:00 (accelerator) and 11:10 (CPU): idle from 11:10. A checkpoint
  (step 100) is written at 11:20, complete after 10 quiet minutes (11:30); the hourly
  sweep at 11:35 stops M1 in its account; EC2 says ``stopped`` at 11:36.
  An alarm named like M1's accelerator alarm, from a third account (333333333333), says
  OK at 11:15: it is not the tracker's and does not end M1's idleness.
- home-train: two p5.48xlarge (H1, H2, $55.04/h) and one c5.24xlarge (C1, $4.08/h) in
  the tracker's own account, all opted in, with a checkpoint at 11:20. For each, one
  alarm under the tracker's name is not the tracker's: H1's CPU alarm re-created with
  another threshold (80 %), H2's accelerator alarm re-created with another metric
  (NeuronMonitor's, not the GPU's), and both of C1's (the tracker makes no alarms for a
  CPU-only node). The tracker's own H1 accelerator and H2 CPU alarms do go to ALARM;
  nothing is idle, nothing is stopped.
- sft-run: two SageMaker training jobs of that name, one in the tracker's account (16 x
  ml.trn1.32xlarge, 00:00-10:00, 10 h billable: job home-sft) and one in the member
  account (1 x ml.trn1.32xlarge, 10:00-11:00, 1 h billable: job member-sft), each priced
  from its own account's DescribeTrainingJob.
"""

import json
from pathlib import Path
from typing import Any

from costtracker.fakes.scenario_events import (
    alarm_state_event,
    ec2_state_event,
    instance_arn,
    s3_object_event,
    training_job_arn,
    training_job_event,
)

HERE = Path(__file__).parent
HOME, MEMBER, THIRD = "123456789012", "222222222222", "333333333333"
US, EU = "us-east-1", "eu-west-1"
M1, H1, C1 = "i-0c1000000000000c1", "i-0c2000000000000c2", "i-0c3000000000000c3"
H2 = "i-0c4000000000000c4"
NEURON = ("NeuronMonitor", "neuroncore_utilization")
GPU = ("CWAgent", "nvidia_smi_utilization_gpu")
CPU = ("AWS/EC2", "CPUUtilization")
OPT_IN = {"costtracker:auto-stop": "true"}
HOME_SFT, MEMBER_SFT = {"training-job": "home-sft"}, {"training-job": "member-sft"}


def state(eid: str, at: str, iid: str, st: str, account: str, region: str) -> dict:
    arn = instance_arn(iid, account=account, region=region)
    return ec2_state_event(eid, iid, st, at, account=account, region=region, resources=[arn])


def alarm(
    eid: str,
    at: str,
    name: str,
    metric: tuple[str, str],
    iid: str,
    threshold: float,
    account: str,
    region: str,
    value: str = "ALARM",
) -> dict:
    """A CloudWatch Alarm State Change to ``value``, as CloudWatch sends it from
    ``account``."""
    return alarm_state_event(
        eid,
        name,
        value,
        at,
        metric=metric,
        instance_id=iid,
        previous="OK" if value != "OK" else "ALARM",
        threshold=threshold,
        recent=[1.0],
        return_data=False,
        previous_fields=(),
        account=account,
        region=region,
    )


def checkpoint(eid: str, at: str, job: str, account: str, region: str) -> dict:
    key = f"runs/{job}/step-100/shard-0.pt"
    return s3_object_event(
        eid,
        "ckpt-bucket",
        key,
        at,
        account=account,
        region=region,
        size=1073741824,
        sequencer="00B2B73642",
    )


def training(
    eid: str, at: str, status: str, account: str, count: int, tags: dict[str, str]
) -> dict:
    """A SageMaker Training Job State Change of ``sft-run`` in ``account`` (us-east-1):
    the tracker's 00:00-10:00, the member's 10:00-11:00 (epoch ms)."""
    if count > 1:
        ms = {"start": "1793491200000", "end": "1793527200000"}
    else:
        ms = {"start": "1793527200000", "end": "1793530800000"}
    detail: dict[str, Any] = {
        "TrainingJobName": "sft-run",
        "TrainingJobArn": training_job_arn("sft-run", account=account, region=US),
        "TrainingJobStatus": status,
        "SecondaryStatus": "Completed" if status == "Completed" else "Training",
        "ResourceConfig": {
            "InstanceType": "ml.trn1.32xlarge",
            "InstanceCount": count,
            "VolumeSizeInGB": 0,
        },
        "EnableManagedSpotTraining": False,
        "CreationTime": ms["start"],
        "TrainingStartTime": ms["start"],
        "LastModifiedTime": ms["start"],
        "Tags": tags,
    }
    if status == "Completed":
        detail["TrainingEndTime"] = ms["end"]
    return training_job_event(eid, at, detail, account=account, region=US)


def ours(iid: str, signal: str) -> str:
    return f"costtracker-{iid}-{signal}-low"


events = [
    state("m1-run", "2026-11-01T10:00:00Z", M1, "running", MEMBER, EU),
    state("h1-run", "2026-11-01T10:00:00Z", H1, "running", HOME, US),
    state("h2-run", "2026-11-01T10:00:00Z", H2, "running", HOME, US),
    state("c1-run", "2026-11-01T10:00:00Z", C1, "running", HOME, US),
    # The tracker's own alarms of M1, in its account and region.
    alarm("m1-acc", "2026-11-01T11:00:00Z", ours(M1, "accelerator"), NEURON, M1, 5.0, MEMBER, EU),
    alarm("m1-cpu", "2026-11-01T11:10:00Z", ours(M1, "cpu"), CPU, M1, 10.0, MEMBER, EU),
    # Named like M1's, the same metric and threshold, from a third account.
    alarm("x-acc", "2026-11-01T11:15:00Z", ours(M1, "accelerator"), NEURON, M1, 5, THIRD, EU, "OK"),
    # The tracker's own H1 accelerator and H2 CPU alarms.
    alarm("h1-acc", "2026-11-01T11:00:00Z", ours(H1, "accelerator"), GPU, H1, 5.0, HOME, US),
    alarm("h2-cpu", "2026-11-01T11:00:00Z", ours(H2, "cpu"), CPU, H2, 10.0, HOME, US),
    # Re-created under the tracker's names: another threshold, another metric.
    alarm("r-cpu", "2026-11-01T11:07:00Z", ours(H1, "cpu"), CPU, H1, 80.0, HOME, US),
    alarm("r-acc", "2026-11-01T11:06:00Z", ours(H2, "accelerator"), NEURON, H2, 5.0, HOME, US),
    # For a CPU-only node, for which the tracker makes no alarms.
    alarm("c-acc", "2026-11-01T11:08:00Z", ours(C1, "accelerator"), GPU, C1, 5.0, HOME, US),
    alarm("c-cpu", "2026-11-01T11:09:00Z", ours(C1, "cpu"), CPU, C1, 10.0, HOME, US),
    checkpoint("m1-ck", "2026-11-01T11:20:00Z", "member-ft", MEMBER, EU),
    checkpoint("h1-ck", "2026-11-01T11:20:00Z", "home-train", HOME, US),
    state("m1-stop", "2026-11-01T11:36:00Z", M1, "stopped", MEMBER, EU),
    training("sm-h-run", "2026-11-01T00:00:00Z", "InProgress", HOME, 16, HOME_SFT),
    training("sm-h-end", "2026-11-01T10:00:00Z", "Completed", HOME, 16, HOME_SFT),
    training("sm-m-run", "2026-11-01T10:00:00Z", "InProgress", MEMBER, 1, MEMBER_SFT),
    training("sm-m-end", "2026-11-01T11:00:00Z", "Completed", MEMBER, 1, MEMBER_SFT),
]  # fmt: skip
events.sort(key=lambda e: (e["time"], e["id"]))
scenario = {
    "region": US,
    "account": HOME,
    "prices": {
        "ec2": {"trn1.32xlarge": "21.50", "p5.48xlarge": "55.04", "c5.24xlarge": "4.08"},
        "sagemaker": {"ml.trn1.32xlarge": "24.72"},
        "s3_gb_month": "0.023",
    },
    "checkpoint": {
        "buckets": ["ckpt-bucket"],
        "key_pattern": "^runs/(?P<job>[^/]+)/step-(?P<step>\\d+)/",
    },
    "instances": [
        {
            "instance_id": M1,
            "instance_type": "trn1.32xlarge",
            "account": MEMBER,
            "region": EU,
            "tags": {"training-job": "member-ft", "team": "nlp"} | OPT_IN,
        },
        {
            "instance_id": H1,
            "instance_type": "p5.48xlarge",
            "tags": {"training-job": "home-train", "team": "vision"} | OPT_IN,
        },
        {
            "instance_id": H2,
            "instance_type": "p5.48xlarge",
            "tags": {"training-job": "home-train", "team": "vision"} | OPT_IN,
        },
        {
            "instance_id": C1,
            "instance_type": "c5.24xlarge",
            "tags": {"training-job": "home-train", "team": "vision"} | OPT_IN,
        },
    ],
    "training_jobs": [
        {
            "name": "sft-run",
            "instance_type": "ml.trn1.32xlarge",
            "instance_count": 16,
            "training_seconds": 36000,
            "tags": {"training-job": "home-sft"},
        },
        {
            "name": "sft-run",
            "account": MEMBER,
            "instance_type": "ml.trn1.32xlarge",
            "instance_count": 1,
            "training_seconds": 3600,
            "tags": {"training-job": "member-sft"},
        },
    ],
    "events": events,
    "until": "2026-11-01T20:00:00Z",
}
(HERE / "many_accounts.json").write_text(json.dumps(scenario, indent=1) + "\n")
