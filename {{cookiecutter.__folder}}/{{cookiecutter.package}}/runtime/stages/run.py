"""A run: its settings and where each came from, its places, its accelerator and its data.
`start` builds it once where a command (or the notebook) starts and the command hands it down,
as accelerate's `Accelerator` is: nothing below looks any of it up again."""

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
        """Fold k's run: fold k validates, written into <output>/fold<k>/ (read from
        <trained>/fold<k>/ of a trained run elsewhere)."""
        trained = str(self.places.trained / f"fold{k}") if self.cfg.trained_dir else ""
        out = str(self.places.output / f"fold{k}")
        cfg = dataclasses.replace(self.cfg, fold=str(k), output_dir=out, trained_dir=trained)
        found, read = self.accelerator is not None, self.data is not None
        return start(cfg, self.sources, self.accelerator, on_accelerator=found, read=read)


def start(
    cfg: Config, sources: Sources | None = None, accelerator: Accelerator | None = None,
    *, on_accelerator: bool = True, read: bool = True, trained: bool = False,
) -> Run:  # fmt: skip
    """The run of `cfg` (`sources` by default: each value not a default, from the notebook)."""
    sources = notebook_sources(cfg) if sources is None else sources
    run = Run(cfg, sources, paths.find(cfg, sources), accelerator)
    return started(run, on_accelerator=on_accelerator, read=read, trained=trained)


def started(
    run: Run | Config, *, on_accelerator: bool = True, read: bool = True, trained: bool = False
) -> Run:
    """The run (or a config's) with what it lacks: its accelerator, with `trained` (predict) the
    trained run's model and classes for the fields not given, and its data (`read`)."""
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
    """The run with its data read (source.read), and its config and places as the data says."""
    from ..data import source  # TensorFlow: a command that reads no data (`bench train`) needs none

    cfg, sources, places, data = source.read(run.cfg, run.sources, run.places)
    return dataclasses.replace(run, cfg=cfg, sources=sources, places=places, data=data)
