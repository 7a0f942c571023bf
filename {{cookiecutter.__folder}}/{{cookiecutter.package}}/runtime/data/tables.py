"""The CSV files a user hands the project, read one way: every value as text (007 stays so), past
a byte-order mark, separated by commas, semicolons or tabs, spaces around values cut, saying so."""

from __future__ import annotations

import io

import pandas as pd


def read_csv(source: str | bytes, where: str = "") -> pd.DataFrame:
    """A CSV file (a path, or bytes read from `where`) as text. Raises pandas' errors and a
    ValueError (not UTF-8, empty): each caller names the file."""
    table = read_text(source)
    spaced = table.map(lambda value: value != value.strip())
    renamed = [column for column in table.columns if column != column.strip()]
    if spaced.any(axis=None) or renamed:
        rows, columns = spaced.to_numpy().nonzero()
        example = table.iat[rows[0], columns[0]] if len(rows) else renamed[0]
        count = int(spaced.sum(axis=None)) + len(renamed)
        name = where or (source if isinstance(source, str) else "the CSV")
        print(
            f"{name}: {count} values read without the spaces around them (such as "
            f"{example!r}), as a spreadsheet or a hand edit leaves them"
        )
        table = table.map(str.strip).rename(columns=str.strip)
    return table


def read_text(source: str | bytes) -> pd.DataFrame:
    if isinstance(source, str) and "://" not in source:
        with open(source, "rb") as file:
            source = file.read()
    if isinstance(source, bytes):
        try:
            source.decode("utf-8")
        except UnicodeDecodeError as error:  # a spreadsheet's own code page, most likely
            line = source[: error.start].count(b"\n") + 1
            raise ValueError(
                f"line {line} is not UTF-8 text (byte {source[error.start]:#04x}); save the file "
                "as UTF-8 (in a spreadsheet: CSV UTF-8)"
            ) from None
        if not source.strip():
            raise ValueError("the file is empty: a CSV has a header row, then a row per image")

    def read(sep: str) -> pd.DataFrame:
        data = io.BytesIO(source) if isinstance(source, bytes) else source
        return pd.read_csv(data, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig")

    table = read(",")
    if len(table.columns) == 1:  # one column: perhaps another separator
        for separator in (";", "\t"):
            if separator in table.columns[0]:
                return read(separator)
    return table


def by_answer(values, answers: list[str], how: str) -> tuple:
    """Each answer's row of `values` (a row per image) by `how` (mean, max, first), and the
    answers, in the order first met."""
    frame = pd.DataFrame(values).groupby(pd.Series(answers), sort=False).agg(how)
    rows = frame.to_numpy(values.dtype)
    return rows[:, 0] if values.ndim == 1 else rows, frame.index.tolist()


def gathering(answers: list[str], how: str) -> str:
    """What gathering does, said first: "16 images, 8 answers (mean of 2 per answer)"."""
    counts = pd.Series(answers).value_counts()
    fewest, most = counts.min(), counts.max()
    each = f"{fewest}" if fewest == most else f"{fewest} to {most}"
    return f"{len(answers):,} images, {len(counts):,} answers ({how} of {each} per answer)"


def answer_by_id(table: pd.DataFrame, key: str, columns: list[str]) -> dict[str, str]:
    """Each row's answer by its id (column `key`): its `columns`' values joined by _."""
    return dict(zip(table[key], table[columns].agg("_".join, axis=1), strict=True))


def stem(key: str) -> str:
    """An id without its file's extension (t0.jpg: t0), as a table may spell it."""
    return key.rsplit(".", 1)[0] if "." in key.rsplit("/", 1)[-1] else key


def spellings(key: str) -> tuple[str, str, str, str]:
    """An id as a table may spell it: as is, without its extension, by its file name alone, and
    that without its extension (sub/t0.jpg: sub/t0, t0.jpg, t0)."""
    name = key.rsplit("/", 1)[-1]
    return key, stem(key), name, stem(name)
