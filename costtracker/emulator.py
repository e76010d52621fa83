"""The embedded AWS emulator: moto in server mode on 127.0.0.1, provisioned from the
same definitions the CDK stack uses (table schema, topics), for local runs."""

from __future__ import annotations

import hashlib
import logging
import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

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
    """Start moto on a free loopback port, point boto3 at it, provision, and clean up."""
    from moto.server import ThreadedMotoServer

    from costtracker.emulator_answers import patch_moto_answers
    from costtracker.emulator_items import patch_moto_items
    from costtracker.emulator_queries import patch_moto_queries
    from costtracker.emulator_transactions import patch_moto_transactions_fast
    from costtracker.emulator_updates import patch_moto_updates
    from costtracker.emulator_wire import patch_moto_wire

    _patch_moto_transactions()
    patch_moto_queries()
    patch_moto_items()
    patch_moto_updates()
    patch_moto_transactions_fast()
    patch_moto_wire()
    patch_moto_answers()
    _patch_moto_accounts()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    env = {
        **_CREDENTIAL_ENV,
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "MOTO_ACCOUNT_ID": account,
    }
    with mock.patch.dict(os.environ, env):
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        # moto's backends live in this process: start every emulator empty.
        urllib.request.urlopen(
            urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"), timeout=10
        ).close()
        try:
            yield provision(endpoint, region, account, server)
        finally:
            server.stop()


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


def _ebs(volume: Any) -> dict[str, Any]:
    """A block device as RunInstances takes it; io1/io2 need IOPS (as EC2 requires), so a
    scenario volume without them gets a nominal figure here and keeps its own (none) in
    the ledger."""
    ebs: dict[str, Any] = {"VolumeSize": volume.size_gib, "VolumeType": volume.volume_type}
    if volume.iops is not None:
        ebs["Iops"] = volume.iops
    elif volume.volume_type in ("io1", "io2"):
        ebs["Iops"] = 100
    if volume.throughput is not None and volume.volume_type == "gp3":
        ebs["Throughput"] = volume.throughput
    return ebs


def volume_id_for(instance_id: str, device: str) -> str:
    """A stable EBS volume id for a scenario volume that names none: the same scenario
    gives the same ids (and so byte-identical exports) on every run."""
    return "vol-" + hashlib.sha256(f"{instance_id} {device}".encode()).hexdigest()[:17]


def launch_instance(emulator: Emulator, spec: Any) -> None:
    """Create a scenario's instance in the emulator under its own id, type, tags and disks
    (volume ids from the scenario, or derived from the instance id and device).

    Volumes are created and attached one by one (moto's RunInstances drops a mapping's
    IOPS and throughput, so it refuses io1/io2); an io1/io2 volume the scenario gives no
    IOPS figure is created with a nominal one and then left with none, as the ledger
    must see it."""
    from moto.ec2.models import ec2_backends
    from moto.ec2.utils import random_volume_id

    account = spec.account or emulator.account
    region = spec.region or emulator.region
    ec2 = emulator.client("ec2", account, region)
    devices = [f"/dev/sd{chr(ord('f') + n)}" for n in range(len(spec.volumes))]
    volume_ids = [
        v.volume_id or volume_id_for(spec.instance_id, device)
        for v, device in zip(spec.volumes, devices, strict=True)
    ]
    kwargs: dict[str, Any] = {
        "ImageId": "ami-12c6146b",
        "MinCount": 1,
        "MaxCount": 1,
        "InstanceType": spec.instance_type,
    }
    if spec.availability_zone:
        kwargs["Placement"] = {"AvailabilityZone": spec.availability_zone}
    if spec.tags:
        kwargs["TagSpecifications"] = [
            {
                "ResourceType": "instance",
                "Tags": [{"Key": k, "Value": v} for k, v in spec.tags.items()],
            }
        ]
    if spec.lifecycle == "spot":
        kwargs["InstanceMarketOptions"] = {"MarketType": "spot"}
    # moto builds its EC2 backend (AMIs, their volumes) on first use: build it first, so
    # that only this instance's volumes, in order, take the ids below.
    backend = ec2_backends[account][region]
    pending = list(volume_ids)

    def next_volume_id() -> str:
        return pending.pop(0) if pending else random_volume_id()

    with mock.patch("moto.ec2.models.instances.random_instance_id", return_value=spec.instance_id):
        ec2.run_instances(**kwargs)
    instance = backend.get_instance(spec.instance_id)
    # moto does not model PlatformDetails; set it on the emulated instance.
    instance.platform_details = spec.platform  # type: ignore[attr-defined]
    if spec.lifecycle == "capacity-block":
        instance.lifecycle = "capacity-block"
    if getattr(spec, "capacity_reservation_id", ""):
        instance.capacity_reservation_id = spec.capacity_reservation_id  # type: ignore[attr-defined]
    instance.block_device_mapping.clear()  # no default root volume: the scenario's only
    zone = instance._placement.zone
    for volume, device in zip(spec.volumes, devices, strict=True):
        request = _ebs(volume)
        create: dict[str, Any] = {
            "Size": request["VolumeSize"],
            "VolumeType": request["VolumeType"],
            "AvailabilityZone": zone,
        }
        if "Iops" in request:
            create["Iops"] = request["Iops"]
        if "Throughput" in request:
            create["Throughput"] = request["Throughput"]
        with mock.patch(
            "moto.ec2.models.elastic_block_store.random_volume_id", side_effect=next_volume_id
        ):
            volume_id = ec2.create_volume(**create)["VolumeId"]
        ec2.attach_volume(VolumeId=volume_id, InstanceId=spec.instance_id, Device=device)
        if volume.iops is None and volume.volume_type in ("io1", "io2"):
            backend.get_volume(volume_id).iops = None


def _patch_moto_accounts() -> None:
    """moto answers every request in ``MOTO_ACCOUNT_ID`` when it is set, even one signed
    with an assumed role's keys. Let those keys speak for the role's account (as they do
    in AWS and in moto without the variable), so a scenario can span accounts."""
    from moto.core.responses import BaseResponse
    from moto.iam.models import iam_backends

    if getattr(BaseResponse, "_costtracker_accounts", False):
        return
    original = BaseResponse.get_current_account

    def get_current_account(self: Any) -> str:
        key = self.get_access_key()
        for account_id, account in list(iam_backends.items()):
            for partition in list(account.values()):
                if key in partition.access_keys:
                    return str(account_id)
        return str(original(self))

    BaseResponse.get_current_account = get_current_account  # type: ignore[method-assign]
    BaseResponse._costtracker_accounts = True  # type: ignore[attr-defined]


def _patch_moto_transactions() -> None:
    """moto backs up every table a transaction touches with a deep copy, so a
    transaction's cost grows with the table. Back up the touched items instead:
    all-or-nothing stays exactly as it was (on any failure the touched items are put
    back as they were), at a cost that no longer grows with the table."""
    import copy

    import moto.dynamodb.models as dynamodb_models
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType

    if getattr(DynamoDBBackend, "_costtracker_patched", False):
        return
    original = DynamoDBBackend.transact_write_items

    class _NoTableCopy:
        """``copy`` as moto's transaction sees it: its table backups become references."""

        @staticmethod
        def deepcopy(value: Any, memo: Any = None) -> Any:
            return value

        def __getattr__(self, name: str) -> Any:
            return getattr(copy, name)

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        saved: list[tuple[Any, Any, Any, Any]] = []
        for entry in transact_items:
            op_type, op = next(iter(entry.items()))
            table = self.tables.get(op.get("TableName"))
            if table is None:
                continue
            key = op["Item"] if op_type == "Put" else op["Key"]
            h = DynamoType(key[table.hash_key_attr])
            r = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
            bucket = table.items.get(h)
            current = bucket.get(r) if (r is not None and bucket is not None) else None
            if r is None:
                current = bucket
            saved.append((table, h, r, copy.deepcopy(current)))
        setattr(dynamodb_models, "copy", _NoTableCopy())  # noqa: B010 (moto module global)
        try:
            original(self, transact_items)
        except Exception:
            for table, h, r, item in reversed(saved):
                if r is None:
                    if item is None:
                        table.items.pop(h, None)
                    else:
                        table.items[h] = item
                elif item is None:
                    table.items.get(h, {}).pop(r, None)
                else:
                    table.items[h][r] = item
            raise
        finally:
            setattr(dynamodb_models, "copy", copy)  # noqa: B010

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    DynamoDBBackend._costtracker_patched = True  # type: ignore[attr-defined]
