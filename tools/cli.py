"""What every fusec command-line tool does around its click command.

``run_cli`` runs a click command so that no error reaches the user as a traceback: usage errors
are one line and exit 2, a closed output pipe exits quietly, and an unexpected exception (a bug in
fusec) is one line and exit 70; ``FUSEC_TRACEBACK=1`` re-raises it for debugging.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

import click

from fusec import knobs
from fusec.files import OutputError

EXIT_INPUT = 1
EXIT_USAGE = 2
INTERNAL_ERROR = 70

SIGNAL_NAMES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
"""The signals a tool ends on cleanly, and the word its one line says."""


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived. A BaseException, like KeyboardInterrupt, so that no
    ``except Exception`` swallows it; unlike KeyboardInterrupt, click does not catch it."""

    def __init__(self, signum: int) -> None:
        super().__init__(SIGNAL_NAMES.get(signum, f"signal {signum}"))
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise `Interrupted` (restored after; only the
    main thread can set handlers, elsewhere the block runs as it is). A signal ignored when
    the block starts stays ignored, as for a job a shell started in the background."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in SIGNAL_NAMES
                if signal.getsignal(s) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def show_warnings(prog: str) -> None:
    """Prints fusec's logged warnings (a damaged cache entry rebuilt, an unwritable cache) on
    stderr as ``<prog>: warning: ...`` (tools call this for ``--verbose``)."""
    import logging

    hide_warnings()
    logger = logging.getLogger("fusec")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(f"{prog}: warning: %(message)s"))
    handler.fusec_tool = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)


def hide_warnings() -> None:
    """Removes what `show_warnings` added (`run_cli` does, when its command ends)."""
    import logging

    logger = logging.getLogger("fusec")
    for handler in [h for h in logger.handlers if getattr(h, "fusec_tool", False)]:
        logger.removeHandler(handler)


def run_cli(
    command: click.Command,
    prog: str,
    argv: list[str] | None = None,
    usage_errors: tuple[type[Exception], ...] = (),
) -> int:
    """Runs ``command`` with ``argv`` and returns its exit code; ``usage_errors`` are exception
    types whose message is a complete one-line usage error."""
    callback = command.callback
    if callback is not None:
        command.callback = _eof_is_no_abort(callback)
    try:
        with signals_raise():
            command.main(args=argv, prog_name=prog, standalone_mode=False)
    except Interrupted as e:
        click.echo(f"{prog}: {e}", err=True)
        return e.exit_code
    except OutputError as e:
        click.echo(str(e), err=True)
        return EXIT_INPUT
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        message = e.format_message().rstrip(".")
        click.echo(f"{prog}: error: {message} (see '{prog} --help')", err=True)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (``prog ... | head``): nothing left to report to.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_INPUT
    except click.exceptions.Abort:  # a KeyboardInterrupt that click caught
        click.echo(f"{prog}: interrupted", err=True)
        return 130
    except SystemExit as e:
        return int(e.code or 0)
    except usage_errors as e:
        click.echo(str(e), err=True)
        return EXIT_USAGE
    except Exception as e:  # a bug in fusec: still one line, never a traceback
        if os.environ.get("FUSEC_TRACEBACK"):
            raise
        click.echo(f"{prog}: internal error: {type(e).__name__}: {e}", err=True)
        return INTERNAL_ERROR
    finally:
        command.callback = callback
        hide_warnings()
    return 0


class UnexpectedEOF(Exception):
    """An ``EOFError`` raised inside a command (a reader that met the end of a file early)."""


def _eof_is_no_abort(callback: Callable[..., object]) -> Callable[..., object]:
    """``callback``, with an ``EOFError`` it raises turned into `UnexpectedEOF`: click takes an
    ``EOFError`` for Ctrl-D at a prompt and reports it as an interruption (exit 130), so an
    unread end of file deep in a tool would read as the user's Ctrl-C."""

    @functools.wraps(callback)
    def guarded(*args: object, **kwargs: object) -> object:
        try:
            return callback(*args, **kwargs)
        except EOFError as e:
            raise UnexpectedEOF(f"EOFError: {e}" if str(e) else "EOFError") from e

    return guarded


def knob_values(settings: tuple[str, ...]) -> dict[str, bool]:
    """The ``--knob NAME=VALUE`` options as knob values (`fusec.knobs`); an unknown knob or a bad
    value, here or in a ``FUSEC_KNOB_*`` variable, is a command-line error."""
    try:
        values = knobs.parse_assignments(settings)
        knobs.values()  # the environment's settings, checked before anything runs
    except knobs.KnobError as e:
        raise click.UsageError(str(e)) from None
    return values
