"""Accrual: what a record has cost, as fixed amounts plus linear terms over clocks.

A term is keyed by (component, clock, denominator) and holds three numbers:
``fixed`` (a closed amount), ``weight`` and ``offset``; its value at ``now`` is
``(fixed + weight x clock(now) - offset) / denominator``. Open things (a running
segment, an attached volume, a stored checkpoint) are linear in their clock;
closed things are fixed. Sums and differences of accruals are term-wise, which
is what lets a per-job rollup be kept by adding each record's change.

Numerators are exact decimals (rate x integer clock): nothing is rounded until
a value is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from shared.domain.clock import month_clock, seconds_clock

# Components: what a number is a cost (or count) of.
INSTANCE = "instance"
INSTANCE_LIST = "instance_list"
EBS = "ebs"
STORAGE = "checkpoint_storage"
IDLE = "wasted_idle"
IDLE_LIST = "wasted_idle_list"
SECONDS = "instance_seconds"
ML_STORAGE = "ml_storage"
WARM_POOL = "warm_pool"
WASTED_RESERVED = "wasted_reserved"
FSX = "fsx"  # FSx for Lustre storage (cost rule 13)
# Charges of their own beside instance, EBS and checkpoint storage (in a job's total).
MANAGED_COMPONENTS = (ML_STORAGE, WARM_POOL, WASTED_RESERVED)
# What a job's ``total`` adds up (docs/cost-rules.md): instance, EBS, checkpoint storage, managed
# charges and file systems.
TOTAL_COMPONENTS = (INSTANCE, EBS, STORAGE, *MANAGED_COMPONENTS, FSX)

# Clocks: "s" whole seconds, "m" calendar-month units, "spot:<series>" a spot series'
# cumulative integral (USD-seconds per hour).
SECONDS_CLOCK = "s"
MONTH_CLOCK = "m"


# "w:<low>:<high>": the seconds clock clamped to [low, high] (no high: unbounded), for
# reserved capacity that accrues only inside its window.
WINDOW_CLOCK_PREFIX = "w:"


def window_clock_value(clock: str, at: datetime) -> Decimal:
    _, low, high = clock.split(":", 2)
    value = max(int(low), seconds_clock(at))
    if high:
        value = min(int(high), value)
    return Decimal(value)


def spot_clock(series: str) -> str:
    return f"spot:{series}"


TermKey = tuple[str, str, int]  # (component, clock, denominator)
_ZERO = Decimal(0)
ClockReader = Callable[[str, datetime], Decimal]


def basic_clock(clock: str, at: datetime) -> Decimal:
    if clock == SECONDS_CLOCK:
        return Decimal(seconds_clock(at))
    if clock == MONTH_CLOCK:
        return Decimal(month_clock(at))
    if clock.startswith(WINDOW_CLOCK_PREFIX):
        return window_clock_value(clock, at)
    raise KeyError(f"no reader for clock {clock!r}")


@dataclass
class Accrual:
    """Mutable while built, then treated as a value (add, subtract, read)."""

    terms: dict[TermKey, list[Decimal]] = field(default_factory=dict)

    def _term(self, key: TermKey) -> list[Decimal]:
        term = self.terms.get(key)
        if term is None:  # a new term starts at zero (Decimal is immutable: one zero serves)
            term = self.terms[key] = [_ZERO, _ZERO, _ZERO]
        return term

    def fixed(self, component: str, clock: str, denom: int, amount: Decimal | int) -> Accrual:
        key = (component, clock, denom)
        term = self.terms.get(key)
        if term is None:  # as ``_term`` makes it, then added to (inline: called often)
            self.terms[key] = [_ZERO + Decimal(amount), _ZERO, _ZERO]
        else:
            term[0] += Decimal(amount)
        return self

    def linear(
        self, component: str, clock: str, denom: int, weight: Decimal | int, since: Decimal | int
    ) -> Accrual:
        """Accrue ``weight`` per clock unit from clock value ``since`` on."""
        term = self._term((component, clock, denom))
        term[1] += Decimal(weight)
        term[2] += Decimal(weight) * Decimal(since)
        return self

    def add(self, other: Accrual, sign: int = 1) -> Accrual:
        terms = self.terms
        for key, (f, w, o) in other.terms.items():
            term = terms.get(key)
            if term is None:  # as ``_term`` makes it, then added to: the same arithmetic
                terms[key] = [_ZERO + sign * f, _ZERO + sign * w, _ZERO + sign * o]
                continue
            term[0] += sign * f
            term[1] += sign * w
            term[2] += sign * o
        return self

    def minus(self, other: Accrual) -> Accrual:
        return Accrual({k: list(v) for k, v in self.terms.items()}).add(other, -1)

    def nonzero(self) -> Iterator[tuple[TermKey, list[Decimal]]]:
        for key, values in sorted(self.terms.items()):
            if any(values):
                yield key, values

    def value(self, component: str, now: datetime, clocks: ClockReader = basic_clock) -> Decimal:
        total = Decimal(0)
        for (comp, clock, denom), (f, w, o) in self.terms.items():
            if comp != component or not (f or w or o):
                continue
            numerator = f - o
            if w:
                numerator += w * clocks(clock, now)
            total += numerator / denom
        return total

    def total_usd(self, now: datetime, clocks: ClockReader = basic_clock) -> Decimal:
        """The contract's ``total`` at ``now``: the sum of ``TOTAL_COMPONENTS``."""
        return sum((self.value(c, now, clocks) for c in TOTAL_COMPONENTS), Decimal(0))

    def weight(self, component: str) -> dict[str, Decimal]:
        """The linear weights of a component per clock (what accrues per clock unit)."""
        out: dict[str, Decimal] = {}
        for (comp, clock, denom), (_, w, _) in self.terms.items():
            if comp == component and w:
                out[clock] = out.get(clock, Decimal(0)) + w / denom
        return out

    def clocks(self) -> set[str]:
        return {clock for (_, clock, _), (_, w, _) in self.terms.items() if w}

    def is_open(self) -> bool:
        return any(w for (_, w, _) in self.terms.values())


def total(accruals: Iterable[Accrual]) -> Accrual:
    out = Accrual()
    for accrual in accruals:
        out.add(accrual)
    return out


# Flat attribute names for storage (a rollup keeps one number per name and adds deltas).
def attribute_name(key: TermKey, part: str) -> str:
    component, clock, denom = key
    return f"a|{component}|{clock}|{denom}|{part}"


# The attribute names of each term seen, (f, w, o): every rollup write names the same
# few terms again. Cleared when full (a ledger has few distinct terms).
_TERM_NAMES: dict[TermKey, tuple[str, str, str]] = {}
MAX_TERM_NAMES = 10_000


def _term_names(key: TermKey) -> tuple[str, str, str]:
    names = _TERM_NAMES.get(key)
    if names is None:
        if len(_TERM_NAMES) >= MAX_TERM_NAMES:
            _TERM_NAMES.clear()
        names = _TERM_NAMES[key] = (
            attribute_name(key, "f"),
            attribute_name(key, "w"),
            attribute_name(key, "o"),
        )
    return names


def to_attributes(accrual: Accrual) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for key, (f, w, o) in accrual.nonzero():
        fixed_name, weight_name, offset_name = _term_names(key)
        if f:
            out[fixed_name] = f
        if w:
            out[weight_name] = w
        if o:
            out[offset_name] = o
    return out


def from_attributes(attributes: Mapping[str, object]) -> Accrual:
    accrual = Accrual()
    for name, value in attributes.items():
        if not name.startswith("a|"):
            continue
        _, component, clock, denom, part = name.split("|", 4)
        term = accrual._term((component, clock, int(denom)))
        term["fwo".index(part)] += Decimal(str(value))
    return accrual
