"""Writes two_accounts.json (rerun to regenerate): events from the tracker's own account in
us-east-1 and from a member account in eu-west-1 and ap-southeast-2, each priced by its
region. One job (bert-pretrain) runs in both accounts and both regions."""

import json
from pathlib import Path

from costtracker.fakes.scenario_events import ec2_state_event, instance_arn

HERE = Path(__file__).parent
HOME, MEMBER = "123456789012", "210987654321"


def state(eid: str, at: str, iid: str, st: str, account: str, region: str) -> dict:
    arn = instance_arn(iid, account=account, region=region)
    return ec2_state_event(eid, iid, st, at, account=account, region=region, resources=[arn])


H1, H2 = "i-0a1000000000000a1", "i-0a2000000000000a2"
M1, M3 = "i-0b1000000000000b1", "i-0b3000000000000b3"
US, EU, SYD = "us-east-1", "eu-west-1", "ap-southeast-2"
events = [
    state("h1-run", "2026-11-01T10:00:00Z", H1, "running", HOME, US),
    state("m1-run", "2026-11-01T10:30:00Z", M1, "running", MEMBER, EU),
    state("h2-run", "2026-11-01T10:45:00Z", H2, "running", HOME, US),
    state("m3-run", "2026-11-01T11:00:00Z", M3, "running", MEMBER, SYD),
    state("m1-term", "2026-11-01T11:30:00Z", M1, "terminated", MEMBER, EU),
    state("m3-term", "2026-11-01T11:30:00Z", M3, "terminated", MEMBER, SYD),
    state("h2-term", "2026-11-01T11:45:00Z", H2, "terminated", HOME, US),
    state("h1-term", "2026-11-01T12:00:00Z", H1, "terminated", HOME, US),
]
events.sort(key=lambda e: (e["time"], e["id"]))

bert = {"training-job": "bert-pretrain", "project": "bert", "team": "nlp"}
scenario = {
    "region": US,
    "account": HOME,
    # us-east-1 prices come from the bundled snapshot (p4d.24xlarge 21.957642/h,
    # trn1.32xlarge 21.50/h, gp3 0.08/GB-month); eu-west-1 has its own configured prices;
    # ap-southeast-2 has none.
    "prices": {
        "regions": {EU: {"ec2": {"p4d.24xlarge": "24.16"}, "ebs_gb_month": {"gp3": "0.088"}}}
    },
    "instances": [
        {
            "instance_id": H1,
            "instance_type": "p4d.24xlarge",
            "tags": bert,
            "volumes": [{"volume_id": "vol-0a1", "size_gib": 100, "volume_type": "gp3"}],
        },
        {
            "instance_id": M1,
            "instance_type": "p4d.24xlarge",
            "tags": bert,
            "account": MEMBER,
            "region": EU,
            "volumes": [{"volume_id": "vol-0b1", "size_gib": 100, "volume_type": "gp3"}],
        },
        {
            "instance_id": H2,
            "instance_type": "trn1.32xlarge",
            "tags": {"training-job": "us-eval", "team": "nlp"},
            "volumes": [],
        },
        {
            "instance_id": M3,
            "instance_type": "trn1.32xlarge",
            "tags": {"training-job": "syd-trial", "team": "vision"},
            "account": MEMBER,
            "region": SYD,
            "volumes": [],
        },
    ],
    "events": events,
    "until": "2026-11-01T14:00:00Z",
}
(HERE / "two_accounts.json").write_text(json.dumps(scenario, indent=1) + "\n")
