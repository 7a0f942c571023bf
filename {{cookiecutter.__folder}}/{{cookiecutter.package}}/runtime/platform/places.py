"""A run's places, found once where a command starts (data/source.py's `resolved`, after it
chose the data's kind, by paths.py) and carried on its config: every module after it reads
them here, and none finds a place again.

command -> config -> source.resolved -> places -> stages"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ..config import Config, inputs_of
from ..errors import UserError
from . import paths
from .files import place


@dataclasses.dataclass(frozen=True)
class Places:
    """The data folder (a local folder, a gs:// URL or tfds:NAME) and where it came from, each
    path field's file or pattern ("" for an empty field), the output folder and the trained
    run's. A place that could not be found (a Kaggle input not attached) keeps its error,
    raised where it is read, so a command that never reads it runs."""

    data_from: str
    found: dict[str, str]  # by field: data_dir, each of paths.PLACED, output_dir, trained_dir
    unfound: dict[str, str]  # by field: why it could not be found

    def file(self, name: str) -> str:
        """The file, pattern or folder a field names, as found."""
        if name in self.unfound:
            raise UserError(self.unfound[name])
        return self.found[name]

    @property
    def data(self) -> str:
        return self.file("data_dir")

    @property
    def output(self) -> Path:
        return place(self.file("output_dir"))

    @property
    def trained(self) -> Path:
        return place(self.file("trained_dir"))

    def in_data(self, pattern: str) -> str:
        """A file pattern under the data folder (paths.under)."""
        return paths.under(self.data, pattern)

    def in_data_folder(self, pattern: str) -> str:
        """A relative pattern the user gave, read in the data folder (paths.instead_in)."""
        return paths.instead_in(self.data, pattern)

    def describe(self) -> str:
        """Every place given, one a line, as doctor shows them."""
        lines = ["places:"]
        for name in ("data_dir", *paths.PLACED, "output_dir", "trained_dir"):
            if name in self.unfound:
                lines.append(f"  {name}: not found: {self.unfound[name]}")
            elif self.found[name]:
                lines.append(f"  {name}: {self.found[name]}")
        return "\n".join(lines)


def find(cfg: Config) -> Places:
    """Every place of a run, found now."""
    return Places(*paths.find(cfg))


def places_of(cfg: Config) -> Places:
    """The places the command resolved for this config; for a config it did not resolve (made,
    or changed, since: a fold's run, a notebook's cell that sets a value), found now."""
    return inputs_of(cfg).places or find(cfg)
