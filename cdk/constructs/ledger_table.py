"""The ledger table, built from ``shared.adapters.ledger_schema`` (the single source of truth).

Access patterns (from the ``shared/adapters/ledger_schema.py`` docstring; all Query or
GetItem, never Scan):

| # | question                                  | how                                              |
|---|-------------------------------------------|--------------------------------------------------|
| 1 | an instance's record (event path)         | GetItem pk=INST#<id>, sk=INSTANCE (consistent)   |
| 2 | one job's cost and items                  | Query job-index pk=JOB#<job>                     |
| 3 | all jobs active on a UTC day              | Query day-index pk=DAY#<yyyy-mm-dd>              |
| 4 | jobs of a project/team over a date range  | Query project-index / team-index                 |
|   |                                           | pk=<key>#<value>, sk between <from> and <to>~    |
| 5 | open segments (to accrue, split at days)  | Query open-index pk=OPEN (sparse)                |
| 6 | segments still waiting for a price        | Query unpriced-index pk=UNPRICED (sparse)        |
| 7 | a cached price                            | GetItem pk=PRICE#<kind>#<region>#<key>, sk=PRICE |
"""

from __future__ import annotations

from aws_cdk import CfnResource, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from constructs import Construct, IConstruct

from cdk.nag import acknowledge
from shared.adapters import ledger_schema

# What the stores call (shared/adapters/table.py): reads by key, Query, and the
# condition checks of its transactions; writes by PutItem / UpdateItem only.
READ_ACTIONS = (
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DescribeTable",
)
WRITE_ACTIONS = ("dynamodb:PutItem", "dynamodb:UpdateItem")


def _string(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


class LedgerTable(Construct):
    """On-demand, PITR, retained on stack deletion (it is the ledger of record)."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=_string(ledger_schema.PARTITION_KEY),
            sort_key=_string(ledger_schema.SORT_KEY),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            time_to_live_attribute=ledger_schema.TTL_ATTRIBUTE,
            removal_policy=RemovalPolicy.RETAIN,
        )
        for index in ledger_schema.INDEXES:
            self.table.add_global_secondary_index(
                index_name=index.name,
                partition_key=_string(index.partition_key),
                sort_key=_string(index.sort_key),
                projection_type=dynamodb.ProjectionType.ALL,
            )

    def grant_read_write_data(self, role: iam.IRole) -> None:
        """Item reads and the writes the ledger makes (PutItem, UpdateItem): no
        DeleteItem, BatchWriteItem or Scan (no code deletes or scans; CDK's
        ``grant_read_write_data`` would allow all three)."""
        self.grant_read_data(role)
        self.grant_writes(role)

    def grant_read_data(self, role: iam.IRole) -> None:
        """Item reads by key and by Query, on the table and its indexes; never Scan."""
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=list(READ_ACTIONS),
                resources=[self.table.table_arn, f"{self.table.table_arn}/index/*"],
            )
        )
        self._acknowledge_indexes(role)

    def grant_writes(
        self,
        role: iam.IRole,
        leading_keys: tuple[str, ...] = (),
        actions: tuple[str, ...] = WRITE_ACTIONS,
    ) -> None:
        """PutItem / UpdateItem on the table; with ``leading_keys`` (patterns of the
        partition key, ``*`` a wildcard) only on items whose key matches one of them."""
        conditions = (
            {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": list(leading_keys)}}
            if leading_keys
            else None
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=list(actions), resources=[self.table.table_arn], conditions=conditions
            )
        )

    def _acknowledge_indexes(self, role: IConstruct) -> None:
        cfn_table = self.table.node.default_child
        assert isinstance(cfn_table, CfnResource)
        logical_id = Stack.of(self).resolve(cfn_table.logical_id)
        acknowledge(
            role,
            "IAM5",
            "Scoped to this table's own indexes (<table ARN>/index/*, added by the "
            "table grant): the functions query all of its GSIs "
            "(shared.adapters.ledger_schema.INDEXES).",
            finding=f"Resource::<{logical_id}.Arn>/index/*",
        )
