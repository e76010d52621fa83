"""Which accelerator an instance type carries, by the configured families: NeuronCores for
``utilization.neuron_families``, GPUs for the other accelerator families, else CPU."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.config.ledger import UtilizationConfig

NEURON = "Neuron (Trainium/Inferentia)"
GPU = "NVIDIA GPU"
CPU = "CPU"


def accelerator_of(instance_type: str, utilization: UtilizationConfig) -> str:
    metric = utilization.accelerator_metric(instance_type)
    if metric is None:
        return CPU
    return NEURON if metric is utilization.neuron else GPU
