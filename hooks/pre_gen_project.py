"""Check every answer before any file is written; report all problems at once."""

import json
import keyword
import re
import sys

# Answers arrive as JSON so quotes, backslashes and newlines stay data, never code.
ANSWERS = json.loads(
    r"""
{{ cookiecutter | tojson }}
""".strip()
)

# The choices as cookiecutter.json lists them (cookiecutter keeps the original lists).
CHOICES = json.loads(
    r"""
{{ _cookiecutter | tojson }}
""".strip()
)
BACKBONES = CHOICES["backbone"]
# The project's metrics, named once in its runtime/scoring.py (local_extensions.py
# reads them there), each with the classes it scores: [least, most], most 0 for any (a
# metric of values scores targets, num_classes of them: least 1).
METRICS = json.loads(
    r"""
{{ metrics() | tojson }}
""".strip()
)
# A vision transformer's image size is a multiple of its patch. cookiecutter.json keeps these
# beside the choices, as data, for this hook: it runs in the new project's folder, where the
# project's list of backbones (runtime/backbone_choices.py) is not yet written. The template's
# tests check both against that list.
PATCH_SIZE = ANSWERS["_backbone_patch_size"]
# And within a range for some: Swin's windows need 224 px and up, SigLIP's learned positions 224.
SIZE_RANGE = ANSWERS["_backbone_size_range"]
# Imports the generated project needs; a package named like one of them would shadow it.
SHADOWED = {"tensorflow", "keras", "numpy", "jax", "sklearn", "pandas", "tests"}


def as_int(value):
    """An int from an int or a string of digits; None for anything else (bool, float, text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*[0-9]+\s*", value):
        return int(value)
    return None


def problems(answers):
    """Yield (answer, value, why, example) for each answer that cannot make a working project."""
    name = answers["project_name"]
    if not name.strip() or any(ord(c) < 32 for c in name):
        yield "project_name", name, "must be one line of text", "Flower Classification"
    project = answers["project"]
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", project) or ".." in project:
        why = "must be a folder name: letters, digits, '.', '_', '-' (no '/', spaces or '..')"
        yield "project", project, why, "flower-classification"
    package = answers["package"]
    # Not typed but made of the project's name (cookiecutter.json): say so, or the user reads
    # of an answer they never gave.
    made = f" (made from project_name={name!r}: give package, or another name)"
    made = made if package == project.replace("-", "_") else ""
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", package):
        why = "must be a lowercase Python identifier (letters, digits, '_'; no leading digit)"
        yield "package", package, why + made, "flower_classification"
    elif keyword.iskeyword(package) or package in sys.stdlib_module_names or package in SHADOWED:
        why = "is a Python keyword or the name of a module the project imports"
        yield "package", package, why + made, "flower_classification"
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", answers["competition"]):
        why = "must be a Kaggle slug: lowercase letters and digits joined by single '-'"
        yield "competition", answers["competition"], why, "tpu-getting-started"
    size = as_int(answers["image_size"])
    if size is None or not 32 <= size <= 1024:
        yield "image_size", answers["image_size"], "must be a whole number from 32 to 1024", "512"
    classes = as_int(answers["num_classes"])
    least = METRICS.get(answers["metric"], [2])[0]  # 1 for a metric of values: its targets
    if classes is None or classes < least:
        why = f"must be a whole number of at least {least}"
        yield "num_classes", answers["num_classes"], why, "104"
    if answers["backbone"] not in BACKBONES:
        yield "backbone", answers["backbone"], "must be one of " + ", ".join(BACKBONES), "small-cnn"
    patch = PATCH_SIZE.get(answers["backbone"])
    if size and patch and size % patch:
        why = f"must be a multiple of {patch} for backbone={answers['backbone']} (its patch size)"
        yield "image_size", answers["image_size"], why, str(size // patch * patch or patch)
    smallest, largest = SIZE_RANGE.get(answers["backbone"], (0, 1024))
    if size and not smallest <= size <= largest:
        span = f"{smallest}" if smallest == largest else f"from {smallest} to {largest}"
        why = f"must be {span} for backbone={answers['backbone']}"
        yield "image_size", answers["image_size"], why, str(smallest)
    metric = answers["metric"]
    any_classes = next(name for name, (least, most) in METRICS.items() if least == 2 and not most)
    if metric not in METRICS:
        yield "metric", metric, "must be one of " + ", ".join(METRICS), any_classes
    elif classes is not None and classes >= least and not fits(METRICS[metric], classes):
        least, most = METRICS[metric]
        needs = (
            f"{least}" if least == most else f"{least} to {most}" if most else f"{least} or more"
        )
        why = f"scores {needs} classes: it needs num_classes={needs}, not {classes}"
        yield "metric", metric, why, any_classes


def fits(classes_scored, classes):
    """Whether a metric scoring [least, most] classes (most 0: any) scores this many."""
    least, most = classes_scored
    return least <= classes and (not most or classes <= most)


found = list(problems(ANSWERS))
for answer, value, why, example in found:
    print(
        f"ERROR: answer {answer}={value!r} {why}; for example {answer}={example}", file=sys.stderr
    )
if found:
    print(f"{len(found)} answer(s) need fixing; nothing was generated.", file=sys.stderr)
    sys.exit(1)
