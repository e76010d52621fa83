"""Splitting a change in spend into use, efficiency and price: the additive logarithmic
mean Divisia index (LMDI-I), and its rounding to the cent.

One job (one model's training run) spends C = Q x k x p in a period, where

- H = the accelerator-hours it ran (chip-hours), p = C / H its $ per accelerator-hour;
- Q = its useful work: the steps it progressed, or where it has no stepped checkpoints
  in both periods its utilized accelerator-hours H x u (u the measured utilization);
- k = H / Q, the accelerator-hours per unit of that work (its inefficiency).

With L = (C1 - C0) / (ln C1 - ln C0) (the logarithmic mean; C0 where C1 = C0)

    use        = L ln(Q1 / Q0)     more or less work
    efficiency = L ln(k1 / k0)     more or fewer accelerator-hours per unit of work
    price      = L ln(p1 / p0)     a dearer or cheaper accelerator-hour

and use + efficiency + price = L ln(C1 / C0) = C1 - C0 exactly. A job with no measure of
work in both periods has no efficiency part: its change in accelerator-hours is use. A
job that spent in one period only (or ran no hour in one) is all use: nothing to compare.
Steps of two jobs are never added: each job is split on its own, then the parts summed.

Pure: Decimals in, Decimals out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal, localcontext

CENT = Decimal("0.01")
PARTS = ("use", "efficiency", "price")


@dataclass(frozen=True)
class Factors:
    """One job's figures in one period: spend C, accelerator-hours H, and its work Q
    (steps or utilized hours; None: not measured)."""

    cost: Decimal
    hours: Decimal
    work: Decimal | None


@dataclass(frozen=True)
class Split:
    use: Decimal
    efficiency: Decimal
    price: Decimal

    @property
    def total(self) -> Decimal:
        return self.use + self.efficiency + self.price


def log_mean(a: Decimal, b: Decimal) -> Decimal:
    """The logarithmic mean of two positive numbers (a where a = b)."""
    if a == b:
        return a
    with localcontext() as ctx:
        ctx.prec = 40
        return (b - a) / (b.ln() - a.ln())


def _ln_ratio(after: Decimal, before: Decimal) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 40
        return (after / before).ln()


def split(before: Factors, after: Factors) -> Split:
    """LMDI-I parts of ``after.cost - before.cost`` (see the module docstring)."""
    change = after.cost - before.cost
    if min(before.cost, after.cost, before.hours, after.hours) <= 0:
        return Split(change, Decimal(0), Decimal(0))
    weight = log_mean(before.cost, after.cost)
    p0, p1 = before.cost / before.hours, after.cost / after.hours
    price = weight * _ln_ratio(p1, p0)
    if before.work and after.work and before.work > 0 and after.work > 0:
        use = weight * _ln_ratio(after.work, before.work)
        k0, k1 = before.hours / before.work, after.hours / after.work
        efficiency = weight * _ln_ratio(k1, k0)
    else:
        use = weight * _ln_ratio(after.hours, before.hours)
        efficiency = Decimal(0)
    # The logs are exact to 40 digits; what is left (1e-30 or so) joins the price part.
    price += change - (use + efficiency + price)
    return Split(use, efficiency, price)


def to_cents(parts: Mapping[str, Decimal], change_cents: Decimal) -> dict[str, Decimal]:
    """Each part to the cent (half to even), adding up to ``change_cents`` (the change as
    people see it: the rounded after less the rounded before). The cents the rounding
    leaves over go to the part of the largest size (the first such, in the given order):
    it moves least in relative terms."""
    # (+ 0 makes a rounded -0.00 read 0.00)
    rounded = {k: v.quantize(CENT, rounding=ROUND_HALF_EVEN) + 0 for k, v in parts.items()}
    residual = change_cents - sum(rounded.values(), Decimal(0))
    if residual and rounded:
        largest = max(parts, key=lambda k: abs(parts[k]))
        rounded[largest] += residual
    return rounded
