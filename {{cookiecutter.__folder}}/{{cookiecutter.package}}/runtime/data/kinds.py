"""What a run's data is, as read where its command started (source.read): the kinds of data it
trains and tests on, what the data says of itself, and the readers that serve its examples.
Nothing here loads TensorFlow: a notebook's tools and a command's --help read these types."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Protocol

from ..config import AUTO

if TYPE_CHECKING:
    import tensorflow as tf

    from .record_folds import Pooled
    from .records import Split
    from .scan import Shard


class Reader(Protocol):
    """What each kind of data serves: records.Records, images.CompetitionImages and
    tfds_sets.TfdsSet, each made with the settings and places it reads."""

    kind: str  # "records", "images" or "tfds"

    def describe(self) -> str:
        """What doctor says of the data: its folds and classes ("": nothing to say)."""

    def split(self, field: str, labeled: bool) -> Split:
        """The split a file field names, every example's label (or id) read and checked."""

    def training(
        self, files: list[str], skipped: frozenset[str] = frozenset(), with_ids: bool = False
    ) -> tf.data.Dataset:
        """One pass over this process's share of the examples, shuffled, less `skipped`."""

    def in_order(
        self, files: list[str], labeled: bool, with_ids: bool = False
    ) -> tuple[tf.data.Dataset, int]:
        """Every example once, in one fixed order, and how many there are."""

    def carries_ids(self, files: list[str]) -> bool:
        """Whether the examples carry ids."""

    def encoded(self, image: tf.Tensor) -> tf.Tensor:
        """An example's image feature as encoded bytes."""

    def scanned(self, files: list[str], labeled: bool) -> list[Shard] | None:
        """Every image decoded, each that does not named (None: nothing to decode)."""


@dataclasses.dataclass(frozen=True)
class Data:
    """The data a run reads, as read where the command started."""

    trains_from: str  # the kind that trains and validates: "records", "images" or "tfds"
    tests_from: str  # the kind the test set is: images where a rerun's test folder holds files
    manifest: dict | None  # what the data says of itself; None: records that carry no manifest
    train: Reader
    test: Reader
    pooled: Pooled | None = None  # records that carry no folds, pooled where a fold is asked
    metadata_columns: str = ""  # Config.metadata_columns, as the run reads it

    def reads(self, kind: str) -> bool:
        """Whether the run reads data of this kind, for training or test."""
        return kind in (self.trains_from, self.tests_from)

    def reader(self, field: str) -> Reader:
        """The reader of a split, by the file field that names it."""
        return self.test if field == "test_files" else self.train

    @property
    def folds(self) -> int:
        """The folds the data is in, or is pooled into; 1: none."""
        return self.pooled.folds if self.pooled else (self.manifest or {}).get("folds") or 1

    @property
    def uses_metadata(self) -> bool:
        """Whether a table of metadata joins each image: columns named, or "auto" where the
        data holds some (images with their CSV may; a TFDS set has none)."""
        if not self.metadata_columns.strip():
            return False
        if self.metadata_columns != AUTO or self.trains_from == "images":
            return True
        return bool(((self.manifest or {}).get("metadata") or {}).get("columns"))
