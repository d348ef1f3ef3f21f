"""Running a command: user errors become one line on stderr and an exit code.

Kept apart from :mod:`sparsroof.cli.common` (the shared options), which imports the
models: ``sparsroof --help`` needs only this and click.
"""

from __future__ import annotations

import os
import re
import sys

import click

from ..errors import SparsroofError

__all__ = ["check_writable", "echo_error", "echo_message", "fitted_message", "run_guarded"]


def check_writable(path: str) -> None:
    """Fail at once, not after minutes of work, when ``path`` cannot be written."""
    from pathlib import Path

    from ..errors import OptionError

    if not str(path).strip():  # Path("") is the working folder
        raise OptionError(f"{str(path)!r} names no file (an unset variable?)")
    target = Path(path)
    folder = target.parent
    try:
        if target.is_dir():
            raise OptionError(f"{target}: cannot write: it is a directory")
        if not folder.is_dir():
            raise OptionError(f"{target}: cannot write: no directory {folder}")
        if not os.access(folder, os.W_OK) or (target.exists()
                                               and not os.access(target, os.W_OK)):
            raise OptionError(f"{target}: cannot write: permission denied")
    except OSError as err:  # a name too long for the file system, say
        raise OptionError(f"{target}: cannot write: {err.strerror or err}") from None


def fitted_message(line: str, width: int) -> str:
    """``line`` wrapped at spaces to ``width`` columns, later lines indented two spaces;
    a word longer than a line (a path, a number, a name) is never broken.

    >>> print(fitted_message("warning: a.yaml: launch_overhead: missing: a GPU kernel", 30))
    warning: a.yaml:
      launch_overhead: missing: a
      GPU kernel
    """
    import textwrap

    if len(line) <= width:
        return line
    return "\n".join(textwrap.wrap(line, width, subsequent_indent="  ",
                                   break_long_words=False, break_on_hyphens=False))


def echo_message(line: str) -> None:
    """A message on stderr: one line in a log or a pipe (so grep finds it whole), wrapped
    at spaces to the terminal's width on a terminal (so no word is cut at its edge)."""
    if sys.stderr.isatty():
        import shutil

        line = fitted_message(line, shutil.get_terminal_size().columns - 1)
    click.echo(line, err=True)


def echo_error(message: str) -> None:
    """One line on stderr, prefixed so it can be found in logs."""
    echo_message(f"sparsroof: error: {message}")


def silence_stdout() -> None:
    """After the reader went away (| head): what is left goes nowhere, without a second
    error when the interpreter flushes at shutdown."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _file_hint(err: click.UsageError) -> str:
    """Where a command without ``-o`` writes what a user asked ``-o`` for: its result on
    stdout (``-O`` picks the format) and a figure with ``--plot``."""
    if not (isinstance(err, click.NoSuchOption) and err.option_name == "-o"
            and err.ctx is not None):
        return ""
    names = {o for p in err.ctx.command.params for o in getattr(p, "opts", ())}
    ways = [*(["-O/--output FORMAT for the result on stdout"] if "-O" in names else []),
            *(["--plot FILE for a figure"] if "--plot" in names else [])]
    if not ways:
        return ""
    return f": {err.ctx.command_path} has no -o; use {' or '.join(ways)}"


def _in_our_words(message: str) -> str:
    """A usage error of the option parser said as the tool's own: lower case, and its
    suggestion after a semicolon.

    >>> _in_our_words("No such option '--hw'. (Did you mean one of: '--help', '--wide'?)")
    "no such option '--hw'; did you mean one of: '--help', '--wide'?"
    >>> _in_our_words("Invalid value for '-O': 'yaml' is not one of 'table', 'json'.")
    "invalid value for '-O': 'yaml' is not one of 'table', 'json'."
    >>> _in_our_words("Invalid value for '--kernel': 'spmmm' is not one of 'spmv', 'spmm'.")
    "invalid value for '--kernel': 'spmmm' is not one of 'spmv', 'spmm'; did you mean 'spmm'?"
    """
    message = re.sub(r"\. \(Did you mean (.*)\)$", r"; did you mean \1", message)
    message = re.sub(r"\. Did you mean ", "; did you mean ", message)
    choice = re.search(r"'([^']*)' is not one of ((?:'[^']*'(?:, )?)+)\.$", message)
    if choice:  # a slip in a choice is named as every other list's is
        from ..errors import meant

        said = meant(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
        message = message[:-1] + said if said else message
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    return message


def run_guarded(command: click.Command, argv: list[str] | None) -> int:
    """Run a click command; user errors become one line and an exit code, never a traceback."""
    try:
        code = command.main(args=argv, prog_name="sparsroof", standalone_mode=False)
    except click.exceptions.Abort:
        echo_error("aborted")
        return 130
    except click.UsageError as err:
        # one line, as every other error: what is wrong, and where the help is
        where = err.ctx.command_path if err.ctx is not None else "sparsroof"
        hint = _file_hint(err)
        message = err.format_message().rstrip(".") + hint if hint else err.format_message()
        echo_error(f"{_in_our_words(message)} (see '{where} --help')")
        return err.exit_code
    except click.ClickException as err:
        err.show()
        return err.exit_code
    except SparsroofError as err:  # the core names parameters; the command line, its flags
        echo_error(err.on_command_line())
        return err.exit_code
    except BrokenPipeError:
        silence_stdout()
        return 0
    except click.exceptions.Exit as err:
        return err.exit_code
    return code if isinstance(code, int) else 0
