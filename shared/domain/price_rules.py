"""Pure rate rules of the price sources: how an instance's platform names its Price List
operating system and its spot product, a zone's region, and a configured discount applied
to an on-demand rate. No AWS code."""

from __future__ import annotations

import re
from decimal import Decimal

from shared.domain.base import Rate

# PlatformDetails (DescribeInstances) -> Price List "operatingSystem".
_OPERATING_SYSTEMS = {
    "linux/unix": "Linux",
    "red hat enterprise linux": "RHEL",
    "suse linux": "SUSE",
    "windows": "Windows",
    "ubuntu pro": "Ubuntu Pro",
}
# PlatformDetails -> spot ProductDescription.
_SPOT_PRODUCTS = {
    "linux/unix": "Linux/UNIX",
    "red hat enterprise linux": "Red Hat Enterprise Linux",
    "suse linux": "SUSE Linux",
    "windows": "Windows",
}


def operating_system(platform: str) -> str:
    """PlatformDetails -> the Price List's ``operatingSystem`` (unknown ones as given)."""
    return _OPERATING_SYSTEMS.get(platform.lower(), platform)


def spot_product(platform: str) -> str:
    """PlatformDetails -> the spot price history's ``ProductDescription``."""
    return _SPOT_PRODUCTS.get(platform.lower(), platform)


_ZONE = re.compile(r"^([a-z]{2}(?:-[a-z]+)+-\d+)")


def region_of_zone(availability_zone: str) -> str:
    """``eu-west-1a`` -> ``eu-west-1``; a Local Zone ``us-west-2-lax-1a`` -> ``us-west-2``
    (its parent region); empty if it does not look like a zone."""
    match = _ZONE.match(availability_zone)
    return match.group(1) if match else ""


def discounted(rate: Rate, discount: Decimal | None) -> Rate:
    """The rate with its effective price after a configured discount (list price kept)."""
    if not discount:
        return rate
    return rate.model_copy(update={"effective_usd": rate.list_usd * (Decimal(1) - discount)})
