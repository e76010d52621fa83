"""/compare names accelerators by the configured families, not by a list of its own."""

from __future__ import annotations

import pytest

from shared.config.ledger import UtilizationConfig
from shared.domain.accelerators import CPU, GPU, NEURON, accelerator_of


@pytest.mark.parametrize(
    ("instance_type", "expected"),
    [
        ("trn1.32xlarge", NEURON),
        ("trn2.48xlarge", NEURON),
        ("inf2.xlarge", NEURON),
        ("p5.48xlarge", GPU),
        ("p4d.24xlarge", GPU),
        ("g6e.xlarge", GPU),
        ("c7i.large", CPU),
        ("m5.xlarge", CPU),
        ("gpx.large", CPU),
    ],
)
def test_default_families(instance_type: str, expected: str) -> None:
    assert accelerator_of(instance_type, UtilizationConfig()) == expected


def test_configured_neuron_families_decide() -> None:
    only_trn = UtilizationConfig(neuron_families=("trn",))
    assert accelerator_of("trn1.32xlarge", only_trn) == NEURON
    assert accelerator_of("inf2.xlarge", only_trn) == CPU
    assert accelerator_of("p5.48xlarge", only_trn) == GPU
