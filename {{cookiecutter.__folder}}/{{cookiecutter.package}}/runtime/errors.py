"""What a user reads when something is wrong: UserError, and how messages name a field or error."""

from __future__ import annotations

import contextlib
import re


class UserError(Exception):
    """A problem the user can fix (a field, a file, a feature key); shown without a traceback."""

    def _render_traceback_(self):  # IPython shows this instead of a traceback in notebooks
        return [f"error: {self}"]


def first_line(error: Exception) -> str:
    """An exception as one line of a message: its type and its first line."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def named(name: str) -> str:
    """A field as messages name it: as a notebook sets it and as a shell passes it."""
    return f"Config.{name} / {flag(name)}"


def whole_number(flag: str, least: int, zero: str = ""):
    """An argparse type: a whole number of at least `least`, or 0 where `zero` says what 0 means."""

    def read(text: str) -> int:
        value = int(text) if re.fullmatch(r"-?\d+", text.strip()) else None
        if value is None or not (value >= least or (zero and value == 0)):
            want = f"0 ({zero}) or " if zero else ""
            raise UserError(f"{flag} = {text!r}: must be {want}a whole number of at least {least}")
        return value

    return read


def count_flag(parser, command: str, flag: str, default: int, what: str) -> None:
    """A command's own count (a whole number of at least 1), its default said in its help."""
    number = whole_number(f"{command} {flag}", 1)
    parser.add_argument(flag, type=number, default=default, help=f"{what} (default: {default})")


def briefly(error: Exception) -> str:
    """A network error in a few words: Kaggle's message for a refusal, else urllib3's reason."""
    response = getattr(error, "response", None)
    if response is not None:  # a refusal: a Response is falsy when its status is an error
        with contextlib.suppress(ValueError, AttributeError):
            message = response.json().get("message")
            if isinstance(message, str) and message:
                return message
        return response.reason or first_line(error)
    text = str(error)
    reason = re.search(r"\[Errno -?\d+\] [^'\"()]+", text) or re.search(r"Caused by (\w+)", text)
    if reason:
        return f"{type(error).__name__}: {reason.group(reason.lastindex or 0).strip()}"
    line = first_line(error)
    return line if len(line) <= 120 else line[:117] + "..."
