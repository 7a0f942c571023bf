"""The weights' moving average (Config.ema), warmed up with the step count (recipe.py's AdamW
says why). Each epoch scores it and the raw weights on the validation records with the
competition's metric, and says both; the run keeps (saves, predicts with) the average, by a rule
fixed before it started (Config.ema above 0), not by which scored better: a score picked on the
validation records would overstate the CV it reports on them."""

from __future__ import annotations

import keras
from keras import ops

KEPT = ("average", "raw")  # the weights a run can keep, as model.json names them


def averages_weights(net: keras.Model) -> bool:
    """Whether the optimizer keeps a moving average of the weights (Config.ema)."""
    optimizer = getattr(net.optimizer, "inner_optimizer", net.optimizer)  # under loss scaling
    return getattr(optimizer, "use_ema", False)


def scored_keys(metric: str) -> dict[str, str]:
    """The history's keys of each epoch's validation scores, by the weights scored."""
    return {which: f"val_{metric}_{which}" for which in KEPT}


def chosen(history: dict, metric: str) -> dict | None:
    """What model.json records of the weights kept: the average (the rule), and both weights'
    scores at the last epoch. None where the run has no scores of both (no validation, or no
    average)."""
    keys = scored_keys(metric)
    if not all(history.get(key) for key in keys.values()):
        return None
    scores = {f"valid_{which}": history[key][-1] for which, key in keys.items()}
    return {"kept": "average", "rule": "Config.ema above 0", "metric": metric, **scores}


def said(choice: dict | None, averaged: bool) -> str:
    """The line that says which weights the run keeps, and why."""
    if not averaged:
        return "weights kept: the raw weights (no average: --ema 0)"
    rule = "the weights' average (the rule with --ema above 0, fixed before the run)"
    if choice is None:
        return f"weights kept: {rule}"
    return (
        f"weights kept: {rule}: valid {choice['metric']} {choice['valid_average']:.4f}, and "
        f"{choice['valid_raw']:.4f} with the raw weights"
    )


def keep(net: keras.Model) -> None:
    """Leave the average in the model, as Keras' fit ends (`finalize_variable_values`); a run
    resumed after its last epoch, which fit nothing, holds the raw weights: the average goes in
    as fit puts it. The checkpoints keep both, so resuming is exact."""
    if not averages_weights(net):
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
    raw weights and, with an average, for the average too; the weights the run keeps (the
    average, where there is one) give the epoch's val_ scores, both are in the history, and
    a line says them. `score(net)` returns {"metric": ..., "loss": ..., "accuracy": ...} on
    the validation records."""

    def __init__(self, score, metric: str):
        super().__init__()
        self.score, self.metric = score, metric

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        raw = self.score(self.model)
        kept, line = raw, f"valid {self.metric}: {raw['metric']:.4f}"
        if averages_weights(self.model):
            swap = keras.callbacks.SwapEMAWeights()  # under tf.distribute, on every replica
            swap.set_model(self.model)
            swap.on_test_begin()  # the average in; on_test_end puts the raw weights back
            try:
                kept = self.score(self.model)
            finally:
                swap.on_test_end()
            keys = scored_keys(self.metric)
            logs[keys["raw"]], logs[keys["average"]] = raw["metric"], kept["metric"]
            line = (
                f"valid {self.metric}: {kept['metric']:.4f} with the weights' average, "
                f"{raw['metric']:.4f} with the raw weights"
            )
        logs.update({f"val_{name}": value for name, value in kept.items() if name != "metric"})
        logs[f"val_{self.metric}"] = kept["metric"]
        print(line)
