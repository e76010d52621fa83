"""CLI answers that used to mislead, each replaced by one that says what to do: the exact
command, its one line, its exit code (the bundled example behind the local API: team
nlp, project llama, owners ana and ben, checkpoints up to step 2,500 and more)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from costtracker.cli import main
from costtracker.local_api import serve
from costtracker.replay import replay_session
from costtracker.scenario import load_scenario

EXAMPLE = Path(__file__).resolve().parents[2] / "costtracker" / "examples" / "llama-lora-vs-p5.json"
RANGE = ["--from", "2026-11-01", "--to", "2026-11-03"]


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with replay_session(load_scenario(EXAMPLE)) as replayer:
        replayer.run()
        server = serve("127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        yield f"http://127.0.0.1:{server.server_address[1]}"
        server.shutdown()
        server.server_close()


def answer(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of one CLI run."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def one_line(text: str) -> str:
    assert text.endswith("\n") and text.count("\n") == 1, text
    return text.strip()


def test_compare_with_one_id_says_space_separated(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = answer(capsys, ["jobs", "compare", "llama3-8b-lora", "--endpoint", endpoint])
    assert (code, out) == (2, "")
    assert one_line(err) == (
        "costtracker: jobs compare takes 2 to 5 job ids separated by spaces (got 1), "
        "e.g. `costtracker jobs compare llama-trn llama-p5`"
    )


def test_a_team_no_job_has_is_named_with_the_closest_value(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = answer(
        capsys, ["jobs", "ls", *RANGE, "--team", "nlpp", "--endpoint", endpoint]
    )
    assert (code, err) == (0, "")
    assert one_line(out) == (
        "no job active 2026-11-01 .. 2026-11-03 has team=nlpp (did you mean nlp?); "
        "team values then: nlp (tags are case-sensitive; widen --from/--to)"
    )


def test_a_project_no_job_has_lists_the_projects(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["jobs", "ls", *RANGE, "--project", "lama", "--endpoint", endpoint]
    code, out, err = answer(capsys, argv)
    assert (code, err) == (0, "")
    assert one_line(out).startswith(
        "no job active 2026-11-01 .. 2026-11-03 has project=lama (did you mean llama?)"
    )


def test_status_takes_the_word_people_read(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shown = answer(capsys, ["jobs", "ls", *RANGE, "--endpoint", endpoint])[1]
    assert "finished" in shown
    code, out, err = answer(
        capsys, ["jobs", "ls", *RANGE, "--status", "finished", "--endpoint", endpoint]
    )
    assert (code, err) == (0, "")
    same = answer(capsys, ["jobs", "ls", *RANGE, "--status", "complete", "--endpoint", endpoint])
    assert out == same[1] and "finished" in out


def test_estimate_to_a_step_already_passed(
    endpoint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["jobs", "estimate", "llama3-8b-lora", "--target-steps", "100", "--endpoint", endpoint]
    code, out, err = answer(capsys, argv)
    assert (code, out) == (2, "")
    line = one_line(err)
    assert line.startswith("costtracker: job llama3-8b-lora is already at step ")
    assert ", past --target-steps 100: give a step above " in line


def test_a_mistyped_instance_type_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = answer(capsys, ["prices", "trn1.32xlarg", "--endpoint", "http://127.0.0.1:9"])
    assert (code, out) == (2, "")
    assert one_line(err) == (
        "costtracker: 'trn1.32xlarg' is not an instance type AWS lists "
        "(did you mean trn1.32xlarge?)"
    )


def test_an_unknown_region_is_refused_before_asking(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["prices", "trn1.32xlarge", "--region", "us-east-7", "--endpoint", "http://127.0.0.1:9"]
    code, out, err = answer(capsys, argv)
    assert (code, out) == (2, "")
    line = one_line(err)
    assert "argument --region: 'us-east-7' is not an AWS region (did you mean us-east-" in line


def test_as_on_a_reader_says_it_belongs_to_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = answer(capsys, ["jobs", "ls", "--as", "team:nlp"])
    assert (code, out) == (2, "")
    assert one_line(err) == (
        "costtracker: --as belongs to `costtracker demo` (whom its local API acts as): start "
        "the demo with --as, e.g. `costtracker demo --as team:nlp`, then ask it without "
        "(see costtracker --help)"
    )


CDK_JSON = Path(__file__).resolve().parents[2] / "cdk.json"


def test_config_show_refuses_a_region_aws_does_not_have(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["config", "show", "-c", "region=us-east-7", "--cdk-json", str(CDK_JSON)]
    code, out, err = answer(capsys, argv)
    assert (code, out) == (2, "")
    assert one_line(err) == (
        "costtracker: invalid CDK context: region: 'us-east-7' is not an AWS region (did "
        "you mean us-east-2?): name one AWS lists, such as us-east-2 (for a region newer "
        "than the installed botocore, upgrade botocore) (got 'us-east-7', from -c)"
    )


def test_config_show_takes_a_region_aws_has(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["config", "show", "-c", "region=eu-west-1", "--cdk-json", str(CDK_JSON)]
    code, out, err = answer(capsys, argv)
    assert (code, err) == (0, "")
    assert any(line.split()[:3] == ["region", "-c", '"eu-west-1"'] for line in out.splitlines())
