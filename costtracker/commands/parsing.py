"""The parser class (usage errors in one line), the type of a group of subcommands, and
the argument types: each refuses bad input with one line (the parser adds the usage hint)."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Iterable
from datetime import date
from functools import cache
from typing import NoReturn, TypeAlias


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors."""

    def error(self, message: str) -> NoReturn:
        if "unrecognized arguments" in message and "--as" in message.split(":", 1)[-1].split():
            # ``--as`` chooses who the local API acts as: the demo's option, not a reader's.
            message = (
                "--as belongs to `costtracker demo` (whom its local API acts as): start the "
                "demo with --as, e.g. `costtracker demo --as team:nlp`, then ask it without"
            )
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def did_you_mean(text: str, known: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the closest known word, or nothing."""
    close = difflib.get_close_matches(text, list(known), n=1, cutoff=0.75)
    return f" (did you mean {close[0]}?)" if close else ""


def region_name(text: str) -> str:
    """An AWS region botocore knows (a typo is named, with the closest region)."""
    known = aws_regions()
    if known and text not in known:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an AWS region{did_you_mean(text, known)}"
        )
    return text


@cache
def aws_regions() -> frozenset[str]:
    """Every region of the partitions botocore knows (empty if it cannot say)."""
    import botocore.session

    session = botocore.session.get_session()
    regions: set[str] = set()
    for partition in session.get_available_partitions():
        regions.update(session.get_available_regions("ec2", partition))
    return frozenset(regions)


@cache
def instance_types() -> frozenset[str]:
    """Every EC2 instance type and SageMaker training instance type botocore knows."""
    import botocore.session

    session = botocore.session.get_session()
    names: set[str] = set()
    for service, shape in (("ec2", "InstanceType"), ("sagemaker", "TrainingInstanceType")):
        names.update(session.get_service_model(service).shape_for(shape).enum)
    return frozenset(names)


# What ``add_subparsers`` returns; each command group's ``add_*`` function adds to it.
Subparsers: TypeAlias = "argparse._SubParsersAction[Parser]"


def iso_day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day: give YYYY-MM-DD") from None


def bounded_int(limit: int) -> Callable[[str], int]:
    """A whole number from 1 to ``limit``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not 1 <= value <= limit:
            raise argparse.ArgumentTypeError(f"give a number from 1 to {limit}")
        return value

    return parse


def port_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("give a port from 0 (any free one) to 65535")
    return value


def _number(text: str, what: str) -> float:
    """``text`` as a number, or an error naming ``what`` was expected. Infinities and NaN
    come back as they are: they fail every range check below."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def seconds_span(text: str) -> float:
    value = _number(text, "a number of seconds")
    if not 0 <= value <= 7 * 86400:  # inf and NaN fail it too
        raise argparse.ArgumentTypeError("give a number of seconds from 0 to 604800 (7 days)")
    return value


def fraction_text(text: str) -> str:
    """A fraction from 0 to below 1, kept as the text given (the API parses it exactly)."""
    if not 0 <= _number(text, "a number") < 1:
        raise argparse.ArgumentTypeError("give a fraction from 0 to below 1, e.g. 0.2")
    return text


def job_id_text(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("a job id is not empty: list jobs with `jobs ls`")
    return text
