"""Run a module as a machine without TensorFlow would (a GPU machine with JAX alone, Colab's
TPU runtime): `python tests/without_tensorflow.py MODULE ARGS...`. TensorFlow and what needs
it are hidden as if never installed: `import tensorflow` raises ModuleNotFoundError,
importlib.util.find_spec finds nothing, and importlib.metadata knows no such distribution."""

import importlib.machinery
import os
import runpy
import sys

HIDDEN = ("tensorflow", "tf_keras", "tf-keras", "tf-nightly")


def hidden(name: str) -> bool:
    return name.lower().replace("-", "_").startswith(tuple(h.replace("-", "_") for h in HIDDEN))


class WithoutTensorFlow(importlib.machinery.PathFinder):
    """The path finder, blind to TensorFlow's modules and distributions."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if hidden(name.partition(".")[0]):
            return None
        return super().find_spec(name, path, target)

    @classmethod
    def find_distributions(cls, *args, **kwargs):
        found = super().find_distributions(*args, **kwargs)
        return (each for each in found if not hidden(each.metadata["Name"] or ""))


if __name__ == "__main__":
    sys.meta_path[:] = [
        WithoutTensorFlow if finder is importlib.machinery.PathFinder else finder
        for finder in sys.meta_path
    ]
    sys.path[0] = os.getcwd()  # the project's folder, as `python -m` has it
    module, sys.argv = sys.argv[1], sys.argv[1:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
