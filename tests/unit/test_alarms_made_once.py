"""An instance's alarm specs, identities and digests are made once per config object,
and never taken from another config that merely compares equal to it."""

from shared.adapters.alarms import alarm_specs
from shared.config.ledger import UtilizationConfig

IID = "i-0aaaaaaaaaaaaaaa1"


def test_the_same_config_gives_the_same_specs_and_a_list_of_ones_own() -> None:
    config = UtilizationConfig()
    first = alarm_specs(config, IID, "p5.48xlarge", account="1", region="us-east-1")
    first.clear()
    again = alarm_specs(config, IID, "p5.48xlarge", account="1", region="us-east-1")
    assert [s.signal for s in again] == ["accelerator", "cpu"]
    assert again == alarm_specs(config, IID, "p5.48xlarge", account="1", region="us-east-1")
    assert alarm_specs(config, IID, "m5.large") == []


def test_equal_configs_each_digest_the_request_as_they_put_it() -> None:
    """The default threshold is the int 10, a given one the float 10.0: the configs are
    equal, the requests (``Threshold``) are not."""
    default, given = UtilizationConfig(), UtilizationConfig(cpu_low_percent=10)
    assert default == given
    digests = []
    for config in (default, given, default):
        cpu = alarm_specs(config, IID, "p5.48xlarge")[1]
        assert cpu.definition(config) == cpu.definition(config)
        assert cpu.identity(config).threshold == 10
        digests.append(cpu.definition(config))
    assert digests[0] != digests[1] and digests[0] == digests[2]
