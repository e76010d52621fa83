"""The AWS regions the installed botocore knows (its endpoint data, no call made)."""

from __future__ import annotations

from functools import cache


@cache
def known_regions() -> frozenset[str]:
    """The regions of every partition botocore knows (empty if it cannot say)."""
    import botocore.session

    session = botocore.session.get_session()
    return frozenset(
        region
        for partition in session.get_available_partitions()
        for region in session.get_available_regions("ec2", partition)
    )
