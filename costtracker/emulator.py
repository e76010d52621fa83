"""The embedded AWS emulator: moto in server mode on 127.0.0.1, provisioned from the
same definitions the CDK stack uses (table schema, topics), for local runs."""

from __future__ import annotations

import logging
import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

from costtracker.readiness import answer
from shared.adapters import ledger_schema

TABLE_NAME = "costtracker-ledger"
REPORT_BUCKET = "costtracker-reports"
TOPICS = ("finance", "team", "admin")
# The role the emulator assumes to launch a scenario's instances in another account.
EMULATOR_MEMBER_ROLE = "costtracker-emulator-setup"
# The IAM user whose access key the functions sign with, in the scenario's account.
EMULATOR_USER = "costtracker-emulator"
_CREDENTIAL_ENV = {
    "AWS_ACCESS_KEY_ID": "emulator",
    "AWS_SECRET_ACCESS_KEY": "emulator",
    "AWS_SESSION_TOKEN": "emulator",
}


@dataclass
class Emulator:
    endpoint: str
    region: str
    account: str
    topics: dict[str, str]
    alert_queue_url: str
    _server: Any

    def client(self, service: str, account: str = "", region: str = "") -> Any:
        """A client of the scenario's account and region, or of another ``account`` (through
        an assumed role, as the tracker reads member accounts) and ``region``."""
        import boto3

        region = region or self.region
        if not account or account == self.account:
            return boto3.client(service, region_name=region, endpoint_url=self.endpoint)
        credentials = boto3.client(
            "sts", region_name=self.region, endpoint_url=self.endpoint
        ).assume_role(
            RoleArn=f"arn:aws:iam::{account}:role/{EMULATOR_MEMBER_ROLE}",
            RoleSessionName="costtracker-emulator",
        )["Credentials"]
        return boto3.client(
            service,
            region_name=region,
            endpoint_url=self.endpoint,
            aws_access_key_id=credentials["AccessKeyId"],
            aws_secret_access_key=credentials["SecretAccessKey"],
            aws_session_token=credentials["SessionToken"],
        )

    def stop(self) -> None:
        self._server.stop()


@contextmanager
def running_emulator(
    region: str = "us-east-1", account: str = "123456789012"
) -> Iterator[Emulator]:
    """Start moto, as published, on a free loopback port, point boto3 at it, provision,
    and clean up.

    The scenario's account is the account of the keys the functions sign with: an IAM
    user's access key made in that account (moto names a request's account after its
    key, as AWS does), so a member account's assumed-role keys speak for the member."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    env = {**_CREDENTIAL_ENV, "AWS_REGION": region, "AWS_DEFAULT_REGION": region}
    with mock.patch.dict(os.environ, env):
        os.environ.pop("MOTO_ACCOUNT_ID", None)  # it would override every key's account
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            endpoint = f"http://{host}:{port}"
            os.environ["AWS_ENDPOINT_URL"] = endpoint
            # moto's backends live in this process: start every emulator empty.
            status, _ = answer(
                urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"),
                f"the embedded AWS emulator (moto) at {endpoint} to reset",
            )
            if status >= 400:
                raise RuntimeError(f"the embedded AWS emulator refused its reset ({status})")
            os.environ.update(account_keys(endpoint, region, account))
            os.environ.pop("AWS_SESSION_TOKEN", None)
            # boto3's default session keeps the credentials it first found: a fresh one
            # reads these (and, after the block, the environment as it is again).
            boto3.setup_default_session()
            yield provision(endpoint, region, account, server)
        finally:
            server.stop()
            boto3.setup_default_session()


def account_keys(endpoint: str, region: str, account: str) -> dict[str, str]:
    """An access key of an IAM user in ``account``, as the environment's credentials.

    The user is made with moto's published ``x-moto-account-id`` request header (added
    through botocore's ``before-sign`` event hook), the one way to address an account
    before there is a key in it."""
    import boto3

    iam = boto3.client("iam", region_name=region, endpoint_url=endpoint)

    def in_account(request: Any, **_: Any) -> None:
        request.headers["x-moto-account-id"] = account

    iam.meta.events.register("before-sign.iam.*", in_account)
    iam.create_user(UserName=EMULATOR_USER)
    key = iam.create_access_key(UserName=EMULATOR_USER)["AccessKey"]
    return {
        "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
    }


def provision(endpoint: str, region: str, account: str, server: Any) -> Emulator:
    """The stack's stateful resources in the emulator: ledger table, topics, an alert tap."""
    import boto3

    def client(service: str) -> Any:
        return boto3.client(service, region_name=region, endpoint_url=endpoint)

    client("dynamodb").create_table(**ledger_schema.create_table_request(TABLE_NAME))
    client("s3").create_bucket(Bucket=REPORT_BUCKET)
    sns = client("sns")
    sqs = client("sqs")
    queue_url = sqs.create_queue(QueueName="costtracker-alert-tap")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])[
        "Attributes"
    ]["QueueArn"]
    topics = {}
    for audience in TOPICS:
        arn = sns.create_topic(Name=f"costtracker-{audience}-alerts")["TopicArn"]
        sns.subscribe(
            TopicArn=arn,
            Protocol="sqs",
            Endpoint=queue_arn,
            Attributes={"RawMessageDelivery": "false"},
        )
        topics[audience] = arn
    return Emulator(endpoint, region, account, topics, queue_url, server)


def function_environment(emulator: Emulator, ledger_config_json: str) -> dict[str, str]:
    """The environment the stack gives every function, pointed at the emulator."""
    from costtracker.local_api import with_local_admin

    return {
        "TABLE_NAME": TABLE_NAME,
        "FINANCE_TOPIC_ARN": emulator.topics["finance"],
        "TEAM_TOPIC_ARN": emulator.topics["team"],
        "ADMIN_TOPIC_ARN": emulator.topics["admin"],
        # Local mode's API caller is an admin (costtracker.local_api.LOCAL_CALLER_ARN).
        "LEDGER_CONFIG": with_local_admin(ledger_config_json),
        "REPORT_BUCKET": REPORT_BUCKET,
        "POWERTOOLS_SERVICE_NAME": "costtracker",
        "POWERTOOLS_METRICS_NAMESPACE": "CostTracker",
        # The local run prints a JSON document on stdout: no EMF lines there.
        "POWERTOOLS_METRICS_DISABLED": "true",
    }
