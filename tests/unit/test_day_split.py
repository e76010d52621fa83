"""A job's costs inside a window (a UTC day, a budget period) split to the second, with
each segment's minimum on the moment it closed: consecutive days add up to the totals."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from shared.adapters.job_records import load_job
from shared.config.ledger import LedgerConfig, PriceOverrides
from shared.domain.day_split import job_between
from shared.domain.ebs import Volume
from shared.domain.instance import InstanceProfile
from shared.services.instances import record_state_change
from tests.support import ACCOUNT, REGION, Ledger, memory_ledger

IID = "i-0aaaaaaaaaaaaaaa1"
PROFILE = InstanceProfile(
    instance_id=IID,
    instance_type="trn1.32xlarge",
    region=REGION,
    tags={"training-job": "j"},
    volumes=(Volume(volume_id="v", size_gib=100),),
)
CONFIG = LedgerConfig(
    live_prices=False,
    prices=PriceOverrides(
        ec2={"trn1.32xlarge": Decimal(36)}, ebs_gb_month={"gp3": Decimal("0.08")}
    ),
)
START = datetime(2026, 11, 1, 23, 0, tzinfo=UTC)
MIDNIGHT = datetime(2026, 11, 2, tzinfo=UTC)
DAY = timedelta(days=1)


def send(ledger: Ledger, eid: str, when: datetime, state: str) -> None:
    record_state_change(
        ledger.deps,
        event_id=eid,
        at=when,
        instance_id=IID,
        state=state,
        region=REGION,
        account=ACCOUNT,
    )


def day(ledger: Ledger, first: datetime, now: datetime) -> dict[str, Decimal]:
    records = load_job(ledger.table, ledger.deps.rollups, "j", since=first - DAY)
    assert records is not None
    inside, priced = job_between(records, first, first + DAY, now, ledger.deps.prices.series)
    assert priced
    return inside


def monthly(usd_month: Decimal, seconds: int) -> Decimal:
    return usd_month * seconds / (30 * 86400)  # November has 30 days


def test_windowed_cost_splits_at_midnight_and_adds_up_to_the_lifetime_total() -> None:
    ledger = memory_ledger(PROFILE, config=CONFIG, now=START)
    send(ledger, "r", START, "running")
    send(ledger, "s", START + timedelta(hours=2), "stopped")
    send(ledger, "r2", START + timedelta(hours=3), "running")
    send(ledger, "s2", START + timedelta(hours=3, seconds=10), "stopped")
    now = START + timedelta(hours=5)
    day1, day2 = day(ledger, MIDNIGHT - DAY, now), day(ledger, MIDNIGHT, now)
    # day 1: 3,600 s at $36/h; day 2: 3,600 s + the 10 s segment billed as 60 s
    assert day1["instance"] == Decimal(36)
    assert day2["instance"] == Decimal(36) + Decimal("0.6")
    # EBS: 100 GiB x $0.08 = $8/month from the first running on, stopped time included
    assert day1["ebs"] == monthly(Decimal(8), 3600)
    assert day2["ebs"] == monthly(Decimal(8), 4 * 3600)
    whole = ledger.job("j", now)
    assert abs(day1["total"] + day2["total"] - whole.total_usd) < Decimal("1e-20")


def test_a_late_stopping_moves_the_sealed_segment_and_days_still_add_up() -> None:
    ledger = memory_ledger(PROFILE, config=CONFIG, now=START)
    t0 = datetime(2026, 11, 1, 10, tzinfo=UTC)
    send(ledger, "r", t0, "running")
    send(ledger, "stopped", t0 + timedelta(seconds=500), "stopped")
    send(ledger, "stopping", t0 + timedelta(seconds=300), "stopping")  # late: ends at 300 s
    for n in range(1, 20):  # more cycles than the head keeps: the first segment is sealed
        send(ledger, f"r{n}", t0 + timedelta(seconds=1000 * n), "running")
        send(ledger, f"s{n}", t0 + timedelta(seconds=1000 * n + 100), "stopped")
    now = datetime(2026, 11, 2, 12, tzinfo=UTC)
    # 300 s + 19 x 100 s = 2,200 s at $36/h
    assert ledger.job("j", now).instance_usd == Decimal(22)
    assert day(ledger, datetime(2026, 11, 1, tzinfo=UTC), now)["instance"] == Decimal(22)
