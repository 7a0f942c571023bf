"""The model and what judges it: the backbone and its head, augmentation, the run's numbers
(batch, steps, precision, learning rate), probabilities over batches, multi-label thresholds and
the competition's metrics."""


def recipe(name: str):
    """model.py's `name`, for a command given none. A notebook runs model.py in its model cell
    rather than writing it into the package, and passes the cell's functions."""
    from . import model

    return getattr(model, name)
