"""The job-cost REST API: every method IAM-authorized (SigV4), one Lambda proxy
integration, access logs, execution logs (errors), X-Ray, a request validator, stage
throttling."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from cdk.nag import acknowledge
from cdk.stack_settings import ApiThrottling

STAGE = "v1"


class JobCostApi(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        handler: lambda_.IFunction,
        log_retention: logs.RetentionDays,
        throttling: ApiThrottling | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        throttling = throttling or ApiThrottling()
        access_logs = logs.LogGroup(
            self, "AccessLogs", retention=log_retention, removal_policy=RemovalPolicy.DESTROY
        )
        self.api = apigw.RestApi(
            self,
            "Api",
            description="costtracker job costs (IAM auth)",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # Execution logging needs the account-level CloudWatch role.
            cloud_watch_role=True,
            deploy_options=apigw.StageOptions(
                stage_name=STAGE,
                # Every method of the stage: one busy client cannot run up the table
                # or the account's Lambda concurrency.
                throttling_rate_limit=throttling.rate_limit,
                throttling_burst_limit=throttling.burst_limit,
                tracing_enabled=True,
                metrics_enabled=True,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=True,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
            ),
        )
        validator = self.api.add_request_validator(
            "RequestValidator", validate_request_body=True, validate_request_parameters=True
        )
        integration = apigw.LambdaIntegration(handler)
        proxy = self.api.root.add_proxy(default_integration=integration, any_method=False)
        # Explicit per method: a proxy's default_method_options do not carry the
        # request validator over to its ANY method.
        for resource in (self.api.root, proxy):
            resource.add_method(
                "ANY",
                integration,
                authorization_type=apigw.AuthorizationType.IAM,
                request_validator=validator,
            )

        iam_auth = (
            "Every method uses AWS_IAM authorization (SigV4-signed callers with "
            "execute-api:Invoke); a Cognito user pool is not used."
        )
        acknowledge(self.api, "COG4", iam_auth)
        acknowledge(
            self.api,
            "APIG3",
            "Internal API for IAM principals of the account: unsigned or unauthorized "
            "requests are rejected by IAM auth before the integration; no WAF web ACL.",
        )
        acknowledge(
            self.api,
            "IAM4",
            "The API Gateway account's CloudWatch role must use the AWS managed policy "
            "AmazonAPIGatewayPushToCloudWatchLogs (API Gateway execution logging).",
            finding="Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
            "AmazonAPIGatewayPushToCloudWatchLogs",
        )
