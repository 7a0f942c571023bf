"""What a user reads when something is wrong: UserError, a problem they can fix, shown as one
line without a traceback, and how its message names a Config field and an exception."""

from __future__ import annotations


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
