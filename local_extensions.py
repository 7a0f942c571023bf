"""Jinja settings for the template's files, loaded by cookiecutter (`_extensions` in
cookiecutter.json; cookiecutter finds this module beside it)."""

import ast
import sys
from pathlib import Path

from jinja2.ext import Extension

# The project's metrics, named once: its runtime/scoring.py's METRICS.
SCORING = (
    "{{cookiecutter.__folder}}",
    "{{cookiecutter.package}}",
    "runtime",
    "scoring.py",
)


class UnicodeJson(Extension):
    """`tojson` writes characters beyond ASCII as they are. By default it escapes them, and a
    character beyond the first 65,536 (an emoji in a project's name) becomes a pair of
    \\uXXXX halves that a Python string literal reads as two lone surrogates: no file,
    notebook or kernel-metadata.json can hold the title then."""

    def __init__(self, environment):
        super().__init__(environment)
        environment.policies["json.dumps_kwargs"] = {"sort_keys": True, "ensure_ascii": False}


class Metrics(Extension):
    """`metrics()`: each metric the project's scoring.py names, in its order, with the classes
    it scores ([least, most]; most 0: any), for the metric answer's default and its check."""

    def __init__(self, environment):
        super().__init__(environment)
        # The template being rendered: cookiecutter appends its folder to sys.path while it
        # renders, and a second template rendered in one process finds this module imported
        # already, from the first.
        template = Path(sys.path[-1])
        if not template.joinpath(*SCORING).is_file():
            template = Path(__file__).parent
        environment.globals["metrics"] = lambda: metrics(template.joinpath(*SCORING))


def metrics(scoring: Path) -> dict[str, list[int]]:
    tree = ast.parse(scoring.read_text())
    (registry,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "METRICS"
    ]
    (metric,) = [node for node in tree.body if getattr(node, "name", "") == "Metric"]
    (default,) = [
        ast.literal_eval(field.value)
        for field in metric.body
        if isinstance(field, ast.AnnAssign) and field.target.id == "classes"
    ]
    found = {}
    for name, entry in zip(registry.keys, registry.values, strict=True):
        given = {keyword.arg: keyword.value for keyword in entry.keywords}
        found[ast.literal_eval(name)] = list(
            ast.literal_eval(given["classes"]) if "classes" in given else default
        )
    return found
