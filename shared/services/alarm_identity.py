"""Which alarm events speak for an instance: only an alarm watching what the tracker
puts for it (the metric and its instance dimension, the period and the statistic). An
alarm under the tracker's name that watches anything else is someone else's."""

from __future__ import annotations

from shared.adapters.alarms import alarm_specs
from shared.config.ledger import MetricRef
from shared.domain.idle import WatchedMetric
from shared.services.deps import LedgerDeps


def watches_what_we_put(
    deps: LedgerDeps, account: str, instance_id: str, signal: str, watched: WatchedMetric | None
) -> bool:
    """Whether an alarm watches the metric, dimension, period and statistic of the alarm
    the tracker puts for this instance and signal. An instance the ledger does not know
    is left to the caller (an alarm event never creates an instance)."""
    if watched is None:
        return False
    config = deps.config.utilization
    pointer = deps.instances.pointer(account, instance_id)
    head = (
        deps.instances.head(pointer.job_id, account, instance_id)
        if pointer is not None and pointer.job_id
        else None
    )
    refs: tuple[MetricRef, ...]
    if head is None:
        refs = (config.neuron, config.gpu) if signal == "accelerator" else (config.cpu,)
    else:
        specs = alarm_specs(config, instance_id, head.profile.instance_type)
        refs = tuple(s.metric for s in specs if s.signal == signal)
    return (
        watched.period == config.period_seconds
        and watched.stat == "Average"
        and any(
            (watched.namespace, watched.name, watched.dimensions)
            == (ref.namespace, ref.metric, ((ref.dimension, instance_id),))
            for ref in refs
        )
    )
