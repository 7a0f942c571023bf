"""What submission.csv holds besides the id: a class per shape, named in SHAPES (--submission).
Nothing here loads NumPy or pandas until it writes, so the command line's `--help` stays quick."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .errors import UserError, named

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


@dataclasses.dataclass
class Shape:
    """The id column, then `columns` (what the shape writes), and the sample's columns in its
    order. `numbers`: the classes have names, and the competition wants their numbers."""

    id_column: str
    columns: list[str]
    order: list[str]
    numbers: bool = False

    @classmethod
    def without_sample(cls, id_column: str, label_column: str, names, num_classes):
        return cls(id_column, [label_column], [id_column, label_column])

    def numbering(self, names) -> str:
        """Which number is which class, where the submission numbers named classes: the records
        number them in their names' order, which the competition's data page may not."""
        if not names or not (self.numbers or self.columns == numbers_of(len(names))):
            return ""
        pairs = ", ".join(f"{number} = {name}" for number, name in enumerate(names))
        return (
            f"the sample submission numbers the classes, in class order: {pairs}; check this "
            "against the competition's data page"
        )


class Labels(Shape):
    """One column of each image's most probable class (multi-label: every class at or above its
    threshold, separated by spaces), by name, or by number where the sample numbers them."""

    @classmethod
    def of_sample(cls, sample: pd.DataFrame, id_column: str, rest: list[str], names, num_classes):
        if len(rest) != 1:
            raise UserError(
                f"{sample.attrs.get('path', 'the sample submission')} has {len(rest)} columns "
                f"besides {id_column!r} ({rest}); a labels submission has one. Set "
                f"{named('submission')} probabilities for a column per class"
            )
        shown = set(sample[rest[0]]) - {""}
        numbers = bool(names and shown) and not shown & set(names) and all(map(str.isdigit, shown))
        return cls(id_column, rest, list(sample.columns), numbers)

    def describe(self, multi_label: bool) -> str:
        return f"{self.id_column} and {'labels' if multi_label else 'a class'} in {self.columns[0]}"

    def values(self, probabilities: np.ndarray, names, thresholds=None) -> pd.DataFrame:
        import pandas as pd

        labels = list(names) if names and not self.numbers else numbers_of(probabilities.shape[1])
        rows = self.classes(probabilities, thresholds)
        return pd.DataFrame({self.columns[0]: [" ".join(labels[n] for n in row) for row in rows]})

    def classes(self, probabilities: np.ndarray, thresholds) -> list:
        """Each image's classes: its most probable, or each at or above its threshold."""
        import numpy as np

        if thresholds is None:
            return probabilities.argmax(-1)[:, None]
        above = probabilities >= np.asarray(thresholds)
        above[np.arange(len(above)), probabilities.argmax(-1)] = True  # at least one label
        return [np.flatnonzero(row) for row in above]


class Probabilities(Shape):
    """A column per class holding its probability, matched by class name or number, in any order."""

    @classmethod
    def without_sample(cls, id_column: str, label_column: str, names, num_classes):
        columns = list(names or numbers_of(num_classes))
        return cls(id_column, columns, [id_column, *columns])

    @classmethod
    def of_sample(cls, sample: pd.DataFrame, id_column: str, rest: list[str], names, num_classes):
        where = sample.attrs.get("path", "the sample submission")
        return cls(id_column, class_columns(rest, num_classes, names, where), list(sample.columns))

    def describe(self, multi_label: bool) -> str:
        return f"{self.id_column} and a probability column per class"

    def values(self, probabilities: np.ndarray, names, thresholds=None) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(probabilities, columns=self.columns)


class Values(Probabilities):
    """A column per target holding each image's value (one target: the sample's one column)."""

    @classmethod
    def of_sample(cls, sample: pd.DataFrame, id_column: str, rest: list[str], names, num_classes):
        if len(rest) == num_classes == 1:
            return cls(id_column, rest, list(sample.columns))
        return super().of_sample(sample, id_column, rest, names, num_classes)

    def describe(self, multi_label: bool) -> str:
        return f"{self.id_column} and a value per target ({shown(self.columns)})"


@dataclasses.dataclass
class TopLabels(Labels):
    """Each image's `k` most probable classes in one column, the most probable first (MAP@k)."""

    k: int = 3

    def describe(self, multi_label: bool) -> str:
        return f"{self.id_column} and the {self.k} most probable classes in {self.columns[0]}"

    def classes(self, probabilities: np.ndarray, thresholds) -> np.ndarray:
        import numpy as np

        return np.argsort(-probabilities, axis=1, kind="stable")[:, : self.k]


@dataclasses.dataclass
class Positive(Shape):
    """A binary target's one column: the probability of the class it is named after (FAKE, of
    classes REAL and FAKE), else of the second class (ISIC 2024's isic_id,target: 0 and 1)."""

    positive: int = 1

    @classmethod
    def of_sample(cls, sample: pd.DataFrame, id_column: str, rest: list[str], names, num_classes):
        where = sample.attrs.get("path", "the sample submission")
        if len(rest) != 1 or num_classes != 2:
            raise UserError(
                f"{where} has {len(rest)} columns besides {id_column!r} and the model "
                f"{num_classes} classes; the positive class's probability is one column of a "
                f"binary target ({named('num_classes')} 2). Set {named('submission')} to "
                "another"
            )
        positive = list(names or []).index(rest[0]) if rest[0] in (names or []) else 1
        return cls(id_column, rest, list(sample.columns), positive=positive)

    def describe(self, multi_label: bool) -> str:
        positive = f"the probability of class {self.positive} (the positive one)"
        return f"{self.id_column} and {positive} in {self.columns[0]}"

    def values(self, probabilities: np.ndarray, names, thresholds=None) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame({self.columns[0]: probabilities[:, self.positive]})


# Config.submission's choices besides auto (submission.py's `shape_of` picks for auto).
SHAPES: dict[str, type[Shape]] = {
    "labels": Labels, "probabilities": Probabilities, "top": TopLabels, "positive": Positive,
    "values": Values}  # fmt: skip


def numbers_of(num_classes: int) -> list[str]:
    return [str(number) for number in range(num_classes)]


def probability_columns(names, num_classes: int) -> list[str]:
    """A column per class for its probability: p_<name>, or p<number> without names."""
    return [f"p_{name}" for name in names] if names else [f"p{n}" for n in range(num_classes)]


def class_columns(columns: list[str], num_classes: int, names, where: str) -> list[str]:
    """The sample's probability columns in class order, matched by class name or number. Others
    are refused: matched by position, a class's probability could go under another's name."""
    numbers = numbers_of(num_classes)
    for wanted in (names or [], numbers):
        if wanted and len(columns) == len(wanted) and set(columns) == set(wanted):
            return list(wanted)
    expected = numbers if not names or all(column.isdigit() for column in columns) else names
    unknown = [column for column in columns if column not in expected]
    missing = [name for name in expected if name not in columns]
    said = [f"column(s) {shown(unknown)}: no class of the model"] if unknown else []
    said += [f"class(es) {shown(missing)}: no column"] if missing else []
    classes = "class numbers" if expected is numbers else "class names"
    raise UserError(
        f"{where}: {'; '.join(said) or f'{len(columns)} columns'} (the model's {num_classes} "
        f"{classes}: {shown(expected)}); a probability column per class, named by it. Check the "
        f"sample and {named('class_names')}, which names the classes in class order"
    )


def shown(items: list[str], most: int = 5) -> str:
    """A list as a message names it: the first few, and how many more."""
    more = f" and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(repr(item) for item in items[:most]) + more
