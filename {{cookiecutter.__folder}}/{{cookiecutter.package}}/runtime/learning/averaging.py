"""The weights' moving average (Config.ema): warmed up with the step count (model.py's AdamW),
validated beside the raw weights at the end of every epoch, and kept only where it scores better.

Keras' `use_ema` starts the average at the first step's weights and moves it by 1 - ema a step: at
0.99, after 80 steps it still holds 0.45 of the untrained network, and a short run's submission
scored a fraction of what the raw weights had learned. So the momentum grows with the step count,
as TensorFlow's ExponentialMovingAverage(num_updates) and timm's model EMA warm up:
min(ema, (1 + step) / (10 + step)), which averages about the last tenth of the steps until it
reaches `ema`. Each epoch scores both on the validation records with the competition's metric, and
the run keeps (saves, predicts with) whichever scored better at its last epoch, saying which."""

from __future__ import annotations

import keras
from keras import ops

from . import scoring

KEPT = ("average", "raw")  # the weights a run can keep, as model.json names them


def averages_weights(net: keras.Model) -> bool:
    """Whether the optimizer keeps a moving average of the weights (Config.ema)."""
    optimizer = getattr(net.optimizer, "inner_optimizer", net.optimizer)  # under loss scaling
    return getattr(optimizer, "use_ema", False)


def swapped(net: keras.Model):
    """Keras' own swap of the weights and their average (under tf.distribute on every
    replica): call `on_test_begin` to put the average in, `on_test_end` to put it back."""
    swap = keras.callbacks.SwapEMAWeights()
    swap.set_model(net)
    return swap


def scored_keys(metric: str) -> dict[str, str]:
    """The history's keys of each epoch's validation scores, by the weights scored."""
    return {which: f"val_{metric}_{which}" for which in KEPT}


def chosen(history: dict, metric: str) -> dict | None:
    """Which weights a run keeps, from its last epoch's validation scores: the average where
    it scored at least as well as the raw weights, else the raw weights. None where the run
    has no scores of both (no validation, or no average)."""
    keys = scored_keys(metric)
    if not all(history.get(key) for key in keys.values()):
        return None
    scores = {which: history[key][-1] for which, key in keys.items()}
    kept = "average" if scoring.better(scores["average"], scores["raw"], metric) else "raw"
    return {"kept": kept, "metric": metric, **{f"valid_{k}": v for k, v in scores.items()}}


def said(choice: dict | None, averaged: bool) -> str:
    """The line that says which weights the run keeps, and why."""
    if not averaged:
        return "weights kept: the raw weights (no average: --ema 0)"
    if choice is None:
        return "weights kept: the weights' average (no validation records to compare it with)"
    other = "raw" if choice["kept"] == "average" else "average"
    name = {"average": "the weights' average", "raw": "the raw weights"}
    return (
        f"weights kept: {name[choice['kept']]}, valid {choice['metric']} "
        f"{choice['valid_' + choice['kept']]:.4f} against {choice['valid_' + other]:.4f} for "
        f"{name[other]}"
    )


def keep(net: keras.Model, choice: dict | None, raw: list | None = None) -> None:
    """Leave the chosen weights in the model. Keras' fit ends by putting the average into the
    weights (`finalize_variable_values`); where the raw weights scored better, `raw` (their
    values at the last epoch, ValidatedEachEpoch.raw) goes back in. A run resumed after its
    last epoch, which fit nothing, holds the raw weights: the average goes in as fit puts it.
    The checkpoints keep both, so resuming is exact either way."""
    if not averages_weights(net):
        return
    if choice and choice["kept"] == "raw":
        for variable, value in zip(net.trainable_variables, raw or [], strict=False):
            variable.assign(value)
        return
    net.optimizer.finalize_variable_values(net.trainable_variables)
    unshared(net)


def unshared(net: keras.Model) -> None:
    """After a fit with an average, each weight an array of its own. Under JAX the weights
    that fit put the average into share their arrays with it, and Keras donates the arrays it
    gives predict and the next fit (frees them, "Attempt to donate the same buffer twice"):
    saving, which writes the optimizer's average too, or a second fit would find them freed."""
    if averages_weights(net):
        for variable in net.trainable_variables:
            variable.assign(ops.copy(variable))


class ValidatedEachEpoch(keras.callbacks.Callback):
    """At the end of every epoch: the competition's metric on the validation records for the
    raw weights and, with an average, for the average too; the better one's scores become
    the epoch's val_ scores, both are in the history, and a line says them. `score(net)`
    returns {"metric": ..., "loss": ..., "accuracy": ...} on the validation records. `raw`
    holds the raw weights' values where they scored better at the last epoch, for `keep`."""

    def __init__(self, score, metric: str):
        super().__init__()
        self.score, self.metric = score, metric
        self.raw = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        raw = self.score(self.model)
        better, line = raw, f"valid {self.metric}: {raw['metric']:.4f}"
        if averages_weights(self.model):
            swap = swapped(self.model)
            swap.on_test_begin()
            try:
                average = self.score(self.model)
            finally:
                swap.on_test_end()
            keys = scored_keys(self.metric)
            logs[keys["raw"]], logs[keys["average"]] = raw["metric"], average["metric"]
            if scoring.better(average["metric"], raw["metric"], self.metric):
                better, self.raw = average, None
            else:  # fit ends by putting the average in: keep the raw weights' values
                self.raw = [ops.convert_to_numpy(v) for v in self.model.trainable_variables]
            line = (
                f"valid {self.metric}: {average['metric']:.4f} with the weights' average, "
                f"{raw['metric']:.4f} with the raw weights"
            )
        logs.update({f"val_{name}": value for name, value in better.items() if name != "metric"})
        logs[f"val_{self.metric}"] = better["metric"]
        print(line)
