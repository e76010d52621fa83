"""The parser class (usage errors in one line), the type of a group of subcommands, and
the argument types: each refuses bad input with one line (the parser adds the usage hint)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import date
from typing import NoReturn, TypeAlias


class Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


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
