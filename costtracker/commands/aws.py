"""What the commands that call AWS directly (backfill, redrive) share."""

from __future__ import annotations

from costtracker.errors import CliError


def require_region(explicit: str | None = None, hint_url: str = "") -> str:
    """The AWS region to use, or a one-line error (botocore would raise NoRegionError)."""
    import boto3

    region = explicit or boto3.session.Session().region_name
    if not region and hint_url:  # https://sqs.eu-west-1.amazonaws.com/...
        parts = (hint_url.split("//", 1)[-1].split("/", 1)[0]).split(".")
        region = parts[1] if len(parts) > 2 and parts[0] == "sqs" else None
    if not region:
        raise CliError("no AWS region: pass --region, or set AWS_REGION (or a profile's region)")
    return region
