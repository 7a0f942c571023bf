"""A run: its settings and where each came from, its places, the accelerator it runs on and its
data as read. `start` builds it once, where a command starts (or at the top of the notebook),
and the command hands it down, as Hugging Face accelerate's `Accelerator` or Lightning's
`Trainer` is built once and passed: nothing below looks any of it up again. `run.fold(k)` is
fold k's run."""

from __future__ import annotations

import dataclasses

from ..config import Config, Sources, notebook_sources
from ..data.kinds import Data
from ..outputs.run_record import with_trained
from ..platform import paths
from ..platform.accelerator import Accelerator, detect
from ..platform.paths import Places


@dataclasses.dataclass(frozen=True)
class Run:
    cfg: Config  # the settings, plain values, with what the data says filled in
    sources: Sources  # where each value came from: a flag, the notebook, a preset, the data
    places: Places  # where the run reads, writes and resumes
    accelerator: Accelerator | None = None  # None: a command that trains and predicts nothing
    data: Data | None = None  # None: a command that reads no data, or whose data did not read

    def fold(self, k: int) -> Run:
        """Fold k's run: fold k validates, and the run writes into <output>/fold<k>/ (and,
        from a trained run elsewhere, reads <trained>/fold<k>/), its data read for that fold."""
        trained = str(self.places.trained / f"fold{k}") if self.cfg.trained_dir else ""
        out = str(self.places.output / f"fold{k}")
        cfg = dataclasses.replace(self.cfg, fold=str(k), output_dir=out, trained_dir=trained)
        found, read = self.accelerator is not None, self.data is not None
        return start(cfg, self.sources, self.accelerator, on_accelerator=found, read=read)


def start(
    cfg: Config, sources: Sources | None = None, accelerator: Accelerator | None = None,
    *, on_accelerator: bool = True, read: bool = True, trained: bool = False,
) -> Run:  # fmt: skip
    """The run of `cfg` (`sources`: where each value came from; by default, each that is not a
    default was given in the notebook): its places found, then as `started` completes it."""
    sources = notebook_sources(cfg) if sources is None else sources
    run = Run(cfg, sources, paths.find(cfg, sources), accelerator)
    return started(run, on_accelerator=on_accelerator, read=read, trained=trained)


def started(
    run: Run | Config, *, on_accelerator: bool = True, read: bool = True, trained: bool = False
) -> Run:
    """The run a command's function was given, with what it needs and lacks: the accelerator
    (`on_accelerator`); with `trained` (predict), the trained run's model and classes for the
    fields not given; its data (`read`). For a config (a test's, a cell's), `start`'s run."""
    if not isinstance(run, Run):
        return start(run, on_accelerator=on_accelerator, read=read, trained=trained)
    if on_accelerator and run.accelerator is None:
        run = dataclasses.replace(run, accelerator=detect(run.cfg, run.places.output))
    if read and run.data is None:
        if trained and run.cfg.trained_dir:  # a trained run elsewhere says its model, classes
            cfg, sources = with_trained(run.cfg, run.sources, run.places.trained)
            run = Run(cfg, sources, paths.find(cfg, sources), run.accelerator)
        run = with_data(run)
    return run


def with_data(run: Run) -> Run:
    """The run with its data read (source.read): the config with what the data says for the
    fields not given, the places found again where it named a split's files."""
    from ..data import source  # TensorFlow: a command that reads no data (`bench train`) needs none

    cfg, sources, places, data = source.read(run.cfg, run.sources, run.places)
    return dataclasses.replace(run, cfg=cfg, sources=sources, places=places, data=data)
