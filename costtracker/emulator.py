"""The embedded AWS emulator: moto in server mode on 127.0.0.1, provisioned from the
same definitions the CDK stack uses (table schema, topics), for local runs."""

from __future__ import annotations

import logging
import os
import urllib.request
from collections.abc import Callable, Iterator
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

    A request signed with temporary keys (an assumed role's, ``ASIA...``) speaks for the
    role's account, as moto names a request's account after its key; any other request
    of boto3's default session speaks for the scenario's account, through moto's
    published ``x-moto-account-id`` header, added by a botocore ``before-send`` event
    hook (``MOTO_ACCOUNT_ID`` would put every request, the members' too, in one
    account)."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    env = {**_CREDENTIAL_ENV, "AWS_REGION": region, "AWS_DEFAULT_REGION": region}
    if boto3.DEFAULT_SESSION is None:
        boto3.setup_default_session()
    assert boto3.DEFAULT_SESSION is not None
    events = boto3.DEFAULT_SESSION.events
    in_home_account = home_account_header(account)
    with mock.patch.dict(os.environ, env):
        os.environ.pop("MOTO_ACCOUNT_ID", None)  # it would override every key's account
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        events.register("before-send", in_home_account)
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
            yield provision(endpoint, region, account, server)
        finally:
            events.unregister("before-send", in_home_account)
            server.stop()


def home_account_header(account: str) -> Callable[..., None]:
    """A ``before-send`` hook: a request not signed with temporary keys is the scenario's
    account's (the header moto publishes for naming an account)."""

    def in_home_account(request: Any, **_: Any) -> None:
        auth = request.headers.get("Authorization") or ""
        auth = auth.decode() if isinstance(auth, bytes) else str(auth)
        key = auth.split("Credential=", 1)[1].split("/", 1)[0] if "Credential=" in auth else ""
        if not key.startswith("ASIA"):
            request.headers["x-moto-account-id"] = account

    return in_home_account


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
