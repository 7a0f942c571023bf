"""k-fold: which folds a run trains, where each fold's run writes, and the trained fold models
`predict` averages (out_of_fold.py scores every fold's validation predictions together). With
data in folds (`records --folds K`, images and a CSV, a TFDS set), or records that carry none
pooled into folds where a fold is asked (record_folds.py), fold k's run validates on fold k,
trains on the others and writes into <output>/fold<k>/, so each fold resumes on its own."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ..config import Config, given, places_of, validating_fold
from ..errors import UserError, named


def count(cfg: Config) -> int:
    """The folds the run trains in; 1 where it reads its splits as given."""
    return data_folds(cfg) or 1


def data_folds(cfg: Config, asked: bool = True) -> int | None:
    """The folds the data has: the manifest's, or Config.folds for records that carry none
    where a fold is asked (or, without `asked`, could be); None where it says nothing (records
    read as given, or a folder that holds only a test set)."""
    from ..data import records, source  # TensorFlow: `scored` alone (kaggle submit) needs none

    cfg, manifest = source.resolved(cfg)
    if manifest:
        return manifest["folds"]
    return cfg.folds if records.pools(cfg) and (cfg.fold or not asked) else None


def chosen(cfg: Config) -> list[int]:
    return list(range(count(cfg))) if cfg.fold == "all" else [validating_fold(cfg)]


def runs(cfg: Config) -> list[Config]:
    """The runs `train` makes: one per chosen fold with records in folds, else the one run."""
    return [run_config(cfg, fold) for fold in chosen(cfg)] if count(cfg) > 1 else [cfg]


def check_each_fold_validates(cfg: Config) -> None:
    """`--fold all` scores each fold's model on the fold it holds out; validating nothing
    (valid_files given empty) would leave every fold unscored and no out-of-fold table."""
    from ..data import records, source

    if records.pools(source.resolved(cfg)[0]):  # each fold validates on its share of the pool
        return
    if cfg.fold == "all" and not cfg.valid_files and given(cfg, "valid_files"):
        raise UserError(
            f"{named('fold')} all scores each fold's model on the images its fold holds out, "
            f"and {named('valid_files')} is empty, so none would be scored: leave "
            f"{named('valid_files')} out to validate each fold on its own, or train one fold "
            f"({named('fold')} 0) without validation"
        )


def run_config(cfg: Config, fold: int) -> Config:
    """One fold's run: that fold validates, and the run writes into <output>/fold<k>/ (and,
    from a trained run elsewhere, reads <trained>/fold<k>/)."""
    trained = str(places_of(cfg).trained / f"fold{fold}") if cfg.trained_dir else ""
    out = str(places_of(cfg).output / f"fold{fold}")
    return dataclasses.replace(cfg, fold=str(fold), output_dir=out, trained_dir=trained)


def run_root(folder: Path) -> Path:
    """The folder a whole run writes in (or was trained in): for a fold's run, the one above
    its own <folder>/fold<k>, as run_config names it; else the folder itself."""
    return folder.parent if re.fullmatch(r"fold\d+", folder.name) else folder


def trained_runs(cfg: Config) -> list[Config]:
    """The runs whose trained weights `predict` averages: every trained fold's, else the run
    in the output folder itself. A fold model the current folds did not make (fold7/ left
    beside records in 5 folds) is refused, not averaged in. Where the data says nothing of
    folds (a code competition's rerun mounts only the test set beside the trained run), a
    trained run given by Config.trained_dir is taken as it was trained."""
    said = data_folds(cfg, asked=False)  # a run asking for none averages every fold's model
    found = {
        int(match.group(1)): path
        for path in sorted(places_of(cfg).trained.glob("fold*/model.weights.h5"))
        if (match := re.fullmatch(r"fold(\d+)", path.parent.name))
    }
    if said is None and cfg.trained_dir and found:
        return [run_config(cfg, fold) for fold in sorted(found)]
    folds = said or 1
    stale = [str(path) for number, path in sorted(found.items()) if number >= folds or folds == 1]
    if stale:
        made = f"folds 0 to {folds - 1}" if folds > 1 else "no folds"
        raise UserError(
            f"{', '.join(stale)}: trained on folds the current records do not have (they have "
            f"{made}); move these out of {places_of(cfg).trained} or delete them, so that only the "
            "current folds' models are averaged"
        )
    return [run_config(cfg, number) for number in sorted(found)] or [cfg]
