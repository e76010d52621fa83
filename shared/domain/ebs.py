"""EBS volumes and their cost (cost rule 3): what a volume is, its rates, the IOPS and
throughput that are charged beyond gp3's free baseline, and the accrual of an instance's
volumes from its first ``running`` until ``terminated``."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from pydantic import Field

from shared.domain import accrual as acc
from shared.domain.accrual import Accrual
from shared.domain.base import Frozen, Rate
from shared.domain.clock import MONTH_UNITS, month_clock
from shared.domain.segments import unpriced_component

if TYPE_CHECKING:
    from shared.domain.instance import InstanceHead


class Volume(Frozen):
    volume_id: str
    size_gib: int = Field(ge=0)
    volume_type: str = "gp3"
    iops: int | None = Field(default=None, ge=0)
    throughput: int | None = Field(default=None, ge=0)  # MB/s


class VolumeRates(Frozen):
    """$/month rates of one volume: size ($/GB-month), IOPS and throughput (provisioned)."""

    volume_id: str
    size: Rate | None = None
    iops: Rate | None = None
    throughput: Rate | None = None


GP3_FREE_IOPS = 3000
GP3_FREE_THROUGHPUT = 125


def provisioned_iops(volume: Volume) -> int | None:
    """IOPS charged per month: all of them for io1/io2, those above 3,000 for gp3;
    None for io1/io2 without a figure (that part stays unconfirmed)."""
    if volume.volume_type in ("io1", "io2"):
        return volume.iops
    if volume.volume_type == "gp3":
        return max(0, (volume.iops or GP3_FREE_IOPS) - GP3_FREE_IOPS)
    return 0


def provisioned_throughput(volume: Volume) -> int:
    if volume.volume_type == "gp3":
        return max(0, (volume.throughput or GP3_FREE_THROUGHPUT) - GP3_FREE_THROUGHPUT)
    return 0


def ebs_accrual(head: InstanceHead) -> Accrual:
    """Each volume accrues from the instance's first ``running`` until ``terminated``,
    stopped time included, prorated per second over calendar months."""
    out = Accrual()
    start = head.first_running_at
    if start is None:
        return out
    region = head.profile.region
    rates = {r.volume_id: r for r in head.volume_rates}
    weight = Decimal(0)
    for volume in head.profile.volumes:
        rate = rates.get(volume.volume_id, VolumeRates(volume_id=volume.volume_id))
        if rate.size is None:
            out.fixed(unpriced_component(f"ebs:{volume.volume_type}:{region}"), "s", 1, 1)
        else:
            weight += rate.size.effective_usd * volume.size_gib
        iops = provisioned_iops(volume)
        if iops is None or (iops and rate.iops is None):
            out.fixed(f"unconfirmed:ebs_iops:{volume.volume_type}:{region}", "s", 1, 1)
        elif iops and rate.iops is not None:
            weight += rate.iops.effective_usd * iops
        throughput = provisioned_throughput(volume)
        if throughput and rate.throughput is None:
            out.fixed(f"unconfirmed:ebs_throughput:{volume.volume_type}:{region}", "s", 1, 1)
        elif throughput and rate.throughput is not None:
            weight += rate.throughput.effective_usd * throughput
    if not weight:
        return out
    begin = month_clock(start)
    if head.terminated_at is not None:
        end = month_clock(max(head.terminated_at, start))
        out.fixed(acc.EBS, acc.MONTH_CLOCK, MONTH_UNITS, weight * (end - begin))
    else:
        out.linear(acc.EBS, acc.MONTH_CLOCK, MONTH_UNITS, weight, begin)
    return out
