"""The bucket daily summaries and FOCUS exports are written to: versioned (a re-run
keeps the previous file as a version), encrypted, TLS only, never public, with a
lifecycle that ages reports to Infrequent Access and expires old versions. Access logs
go to a log bucket of its own."""

from __future__ import annotations

from aws_cdk import CfnResource, Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cdk.nag import acknowledge


class ReportsBucket(Construct):
    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        common = {
            "encryption": s3.BucketEncryption.S3_MANAGED,
            "enforce_ssl": True,
            "block_public_access": s3.BlockPublicAccess.BLOCK_ALL,
            "removal_policy": RemovalPolicy.RETAIN,
        }
        self.access_logs = s3.Bucket(
            self,
            "AccessLogs",
            # Log delivery by bucket policy, not ACLs (cdk.json feature flag
            # serverAccessLogsUseBucketPolicy): ACLs stay disabled.
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365))],
            **common,  # type: ignore[arg-type]
        )
        acknowledge(
            self.access_logs,
            "S1",
            "This is the access-log bucket of the reports bucket; logging it to itself would loop.",
        )
        self.bucket = s3.Bucket(
            self,
            "Reports",
            versioned=True,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="reports/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    transitions=[
                        s3.Transition(
                            storage_class=s3.StorageClass.INFREQUENT_ACCESS,
                            transition_after=Duration.days(90),
                        )
                    ],
                    noncurrent_version_expiration=Duration.days(90),
                )
            ],
            **common,  # type: ignore[arg-type]
        )

    def grant_write(self, role: iam.IRole) -> None:
        self.bucket.grant_put(role)
        cfn_bucket = self.bucket.node.default_child
        assert isinstance(cfn_bucket, CfnResource)
        logical_id = Stack.of(self).resolve(cfn_bucket.logical_id)
        reason = (
            "Bucket.grant_put: writes daily report objects (any key) of the reports bucket "
            "only, and may abort its own multipart uploads (s3:Abort*)."
        )
        acknowledge(role, "IAM5", reason, finding=f"Resource::<{logical_id}.Arn>/*")
        acknowledge(role, "IAM5", reason, finding="Action::s3:Abort*")
