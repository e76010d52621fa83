"""cdk-nag 3.x acknowledgments: one rule (or one finding of a rule) on one construct,
always with a written reason."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct

PACK = "AwsSolutions"


def acknowledge(scope: IConstruct, rule: str, reason: str, finding: str | None = None) -> None:
    """Acknowledge ``AwsSolutions-<rule>`` (optionally only ``[finding]``) on ``scope``.

    ``finding`` is cdk-nag's finding id, e.g. ``Resource::*`` for IAM5: acknowledging
    a finding leaves every other finding of the same rule reported.
    """
    if not reason.strip():
        raise ValueError(f"an acknowledgment of {rule} needs a reason")
    rule_id = f"{PACK}-{rule}" + (f"[{finding}]" if finding else "")
    Validations.of(scope).acknowledge(Acknowledgment(id=f"{PACK}::{rule_id}", reason=reason))
