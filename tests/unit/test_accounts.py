"""Clients per (account, region): member accounts through an assumed role, cached until
shortly before expiry (shared/adapters/accounts.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from shared.adapters.accounts import (
    AccountClients,
    Credentials,
    MemberAccountUnreachable,
    SingleClient,
    factory_of,
    partition_of,
)

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class FakeSts:
    def __init__(self, fail: str = "") -> None:
        self.assumed: list[str] = []
        self.fail = fail

    def assume_role(self, RoleArn: str, RoleSessionName: str, DurationSeconds: int) -> Any:
        if self.fail:
            raise ClientError({"Error": {"Code": self.fail, "Message": "no"}}, "AssumeRole")
        self.assumed.append(RoleArn)
        n = len(self.assumed)
        return {
            "Credentials": {
                "AccessKeyId": f"ASIA{n}",
                "SecretAccessKey": "s",
                "SessionToken": "t",
                "Expiration": T0 + timedelta(hours=1),
            }
        }


class Maker:
    def __init__(self, sts: FakeSts) -> None:
        self.sts = sts
        self.made: list[tuple[str, str, str | None]] = []

    def __call__(self, service: str, region: str, credentials: Credentials | None) -> Any:
        if service == "sts":
            return self.sts
        self.made.append((service, region, credentials.access_key_id if credentials else None))
        return object()


def clients(sts: FakeSts, now: list[datetime]) -> tuple[AccountClients, Maker]:
    maker = Maker(sts)
    factory = AccountClients(
        maker,
        home_account="111111111111",
        role_name="costtracker-member-read",
        default_region="us-east-1",
        now=lambda: now[0],
    )
    return factory, maker


def test_home_account_and_empty_account_use_the_functions_own_role() -> None:
    sts = FakeSts()
    factory, maker = clients(sts, [T0])
    a = factory.client_for("ec2", "111111111111", "us-east-1")
    b = factory.client_for("ec2", "", "")
    assert a is b
    assert sts.assumed == []
    assert maker.made == [("ec2", "us-east-1", None)]


def test_member_account_assumes_its_role_once_per_account_until_near_expiry() -> None:
    sts = FakeSts()
    now = [T0]
    factory, maker = clients(sts, now)
    east = factory.client_for("ec2", "222222222222", "us-east-1")
    west = factory.client_for("ec2", "222222222222", "eu-west-1")
    assert east is not west  # one client per region, one set of credentials per account
    assert factory.client_for("ec2", "222222222222", "eu-west-1") is west
    factory.client_for("sagemaker", "222222222222", "eu-west-1")
    assert sts.assumed == ["arn:aws:iam::222222222222:role/costtracker-member-read"]
    assert {m[2] for m in maker.made} == {"ASIA1"}
    now[0] = T0 + timedelta(minutes=54)  # still 6 minutes left: kept
    assert factory.client_for("ec2", "222222222222", "eu-west-1") is west
    now[0] = T0 + timedelta(minutes=56)  # under 5 minutes left: renewed, new client
    renewed = factory.client_for("ec2", "222222222222", "eu-west-1")
    assert renewed is not west
    assert len(sts.assumed) == 2
    factory.client_for("ec2", "333333333333", "us-east-1")
    assert sts.assumed[-1] == "arn:aws:iam::333333333333:role/costtracker-member-read"


def test_a_denied_assume_role_is_one_clear_error() -> None:
    factory, _ = clients(FakeSts(fail="AccessDenied"), [T0])
    with pytest.raises(MemberAccountUnreachable) as caught:
        factory.client_for("ec2", "222222222222", "us-east-1")
    message = str(caught.value)
    assert "222222222222" in message and "AccessDenied" in message
    assert "costtracker-member-read" in message and "\n" not in message


def test_home_account_is_asked_once_and_only_when_needed() -> None:
    asked: list[int] = []

    def home() -> str:
        asked.append(1)
        return "111111111111"

    factory = AccountClients(
        Maker(FakeSts()), home_account=home, role_name="r", default_region="us-east-1"
    )
    factory.client_for("ec2")
    assert asked == []
    factory.client_for("ec2", "111111111111")
    factory.client_for("ec2", "111111111111")
    assert asked == [1]


def test_partitions_and_plain_clients() -> None:
    assert partition_of("cn-north-1") == "aws-cn"
    assert partition_of("us-gov-west-1") == "aws-us-gov"
    assert partition_of("eu-west-1") == "aws"
    factory = AccountClients(
        Maker(FakeSts()), home_account="1", role_name="r", default_region="cn-north-1"
    )
    assert factory.role_arn("222222222222") == "arn:aws-cn:iam::222222222222:role/r"
    plain = object()
    wrapped = factory_of(plain)
    assert isinstance(wrapped, SingleClient)
    assert wrapped.client_for("ec2", "222222222222", "eu-west-1") is plain
    assert factory_of(factory) is factory


class Recording:
    """A ``ClientFactory`` that records where it was asked to read."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.asked: list[tuple[str, str, str]] = []

    def client_for(self, service: str, account: str = "", region: str = "") -> Any:
        self.asked.append((service, account, region))
        return self.client


def test_capacity_reservations_read_in_the_given_account_and_region() -> None:
    from shared.adapters.reservations import Ec2CapacityReservations

    class Ec2:
        def describe_capacity_reservations(self, **_: Any) -> Any:
            return {
                "CapacityReservations": [
                    {
                        "CapacityReservationId": "cr-0123456789abcdef0",
                        "InstanceType": "p5.48xlarge",
                        "TotalInstanceCount": 2,
                        "StartDate": T0,
                        "OwnerId": "222222222222",
                    }
                ]
            }

    factory = Recording(Ec2())
    found = Ec2CapacityReservations(factory, account="222222222222", region="eu-west-1").describe(
        "cr-0123456789abcdef0"
    )
    assert found.account == "222222222222"
    assert factory.asked == [("ec2", "222222222222", "eu-west-1")]


def test_client_config_validates_requests_only_where_asked(monkeypatch: Any) -> None:
    """Deployed functions skip botocore's client-side validation (AWS validates again);
    the test suite turns it on, so a malformed request fails here first."""
    from shared.adapters.accounts import client_config

    monkeypatch.delenv("COSTTRACKER_VALIDATE_REQUESTS", raising=False)
    assert client_config().parameter_validation is False
    assert client_config().retries == {"mode": "standard", "max_attempts": 5}
    monkeypatch.setenv("COSTTRACKER_VALIDATE_REQUESTS", "1")
    assert client_config().parameter_validation is True


def test_a_hanging_table_or_topic_gives_up_well_inside_the_budget_ticks_timeout() -> None:
    """Every client on the budget tick's path has timeouts and attempts sized to its
    deployed timeout: one hanging DynamoDB request, and then one hanging publish, still
    leave the tick time to evaluate the other budgets (botocore's defaults: 60 s read,
    more attempts, past the 55 s timeout for one call)."""
    from shared.adapters.accounts import client_config
    from shared.app.functions import FUNCTIONS
    from shared.domain import limits

    tick = next(f for f in FUNCTIONS if f.name == "budget_tick")
    for service, worst in (
        ("dynamodb", limits.TABLE_WORST_SECONDS),
        ("sns", limits.PUBLISH_WORST_SECONDS),
    ):
        config = client_config(service)
        attempts = config.retries["max_attempts"]
        assert attempts * (config.connect_timeout + config.read_timeout) + 2 <= worst, service
    assert tick.timeout_seconds > limits.TABLE_WORST_SECONDS + limits.PUBLISH_WORST_SECONDS
