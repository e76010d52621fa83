"""The progress bar shows on a terminal only."""

import io

from costtracker.progress import Progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_on_a_terminal() -> None:
    stream = Tty()
    progress = Progress(4, "replay", stream=stream)
    for _ in range(4):
        progress.advance()
    progress.close()
    assert "replay [" in stream.getvalue() and "4/4" in stream.getvalue()


def test_progress_is_silent_off_a_terminal_or_when_disabled() -> None:
    plain = io.StringIO()
    Progress(4, "replay", stream=plain).advance()
    quiet = Tty()
    Progress(4, "replay", enabled=False, stream=quiet).advance()
    assert plain.getvalue() == "" and quiet.getvalue() == ""
