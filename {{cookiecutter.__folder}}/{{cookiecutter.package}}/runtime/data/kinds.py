"""What a run's data is, as source.read found it: its kinds, what it says of itself, and the
readers of its examples. No TensorFlow here: a notebook's tools and --help read these types."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Protocol

from ..config import AUTO, Config

if TYPE_CHECKING:
    import tensorflow as tf

    from .records import Pooled
    from .scan import Shard


@dataclasses.dataclass
class Split:
    """One split as checked: files (a TFDS set: the split string), records, ids, doctor's line."""

    files: list[str]
    records: int
    ids: list[str]
    said: str
    fields: tuple[str, ...] = ("test_files", "id_key")  # what names its ids, for messages
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)  # unreadable test images
    labels: list = dataclasses.field(default_factory=list)  # a labeled split's values or shares


class Reader(Protocol):
    """What records.Records, images.CompetitionImages and tfds_sets.TfdsSet serve (defaults)."""

    kind: str  # "records", "images" or "tfds"
    cfg: Config
    manifest: dict | None

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
        return True

    def encoded(self, image: tf.Tensor) -> tf.Tensor:
        """An example's image feature as encoded bytes: here, the feature itself."""
        return image

    def scanned(self, files: list[str], labeled: bool, ids=None) -> list[Shard] | None:
        """Every image decoded, each that fails named (a test one by `ids`); None: TFDS's."""
        return None

    def folds_and_classes(self, how: str = "") -> str:
        """Its folds (`how` made), which validates, and its classes, the first five named."""
        folds, classes = self.manifest["folds"], self.manifest["classes"] or []
        held_out = f", fold {self.cfg.fold or 0} validates" if folds > 1 else ""
        shown = ", ".join(classes[:5]) + (", ..." if len(classes) > 5 else "")
        names = f": {shown}" if classes else ""
        return f"{folds} folds{how}{held_out}, {self.manifest['num_classes']} classes{names}"


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
        return kind in (self.trains_from, self.tests_from)

    def reader(self, field: str) -> Reader:
        return self.test if field == "test_files" else self.train

    @property
    def folds(self) -> int:
        """The folds the data is in, or is pooled into; 1: none."""
        return self.pooled.folds if self.pooled else (self.manifest or {}).get("folds") or 1

    @property
    def uses_metadata(self) -> bool:
        """Whether a table of metadata joins each image: columns named, or "auto" and some."""
        if not self.metadata_columns.strip():
            return False
        in_manifest = ((self.manifest or {}).get("metadata") or {}).get("columns")
        return self.metadata_columns != AUTO or self.trains_from == "images" or bool(in_manifest)
