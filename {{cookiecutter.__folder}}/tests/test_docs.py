"""The docs name only what exists: every flag, make target, Config field, call and file that
README.md and docs/*.md name is checked against the code, so a doc that drifts from it fails
here with the doc, its line and the name, instead of misleading the next reader."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest
from conftest import PROJECT

from {{ cookiecutter.package }}.__main__ import ALIASES, COMMANDS, parser
from {{ cookiecutter.package }}.runtime.config import Config

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it

PACKAGE = "{{ cookiecutter.package }}"
DOCS = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
CODE_BLOCK = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`([^`\n]+(?:\n[^`\n]+)?)`")  # an inline span may wrap onto one more line
# A command of the package (COMMAND, upper case, stands for any), or make at a line's start.
RUN = re.compile(rf"python -m {PACKAGE} ([a-z][\w-]*)|^\s*make ([a-z][\w-]*)")
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")
# Where a doc's path may start (`tests/presets.py`, `tools/carried.py`, `runtime/scoring.py`),
# and the folders the project ships (a user's .venv/, data/ and output/ are not looked into).
BASES = (PROJECT, PROJECT / PACKAGE, PROJECT / PACKAGE / "runtime")
SHIPPED = (PACKAGE, "tests", "docs", "platforms")


@dataclasses.dataclass
class Doc:
    path: Path
    text: str

    def where(self, at: int) -> str:
        return f"{self.path.relative_to(PROJECT)}:{self.text.count(chr(10), 0, at) + 1}"

    def blocks(self) -> list[tuple[int, str]]:
        return [(block.start(1), block[1]) for block in CODE_BLOCK.finditer(self.text)]

    def spans(self) -> list[tuple[int, str]]:
        """The inline code of the prose, code blocks blanked (their lines kept, for `where`)."""
        prose = CODE_BLOCK.sub(lambda block: re.sub(r"[^\n]", " ", block[0]), self.text)
        return [(span.start(1), span[1]) for span in INLINE.finditer(prose)]


def docs() -> list[Doc]:
    return [Doc(path, path.read_text()) for path in DOCS]


def options() -> dict[str, set[str]]:
    """Each command's flags as its parser has them (hidden ones too), built by __main__."""
    (commands,) = [action for action in parser()._actions if action.dest == "command"]
    return {
        name: {flag for action in command._actions for flag in action.option_strings}
        for name, command in commands.choices.items()
    }


def command_lines(doc: Doc):
    """(where, command or make target, the rest of its line): each `python -m PACKAGE COMMAND`
    and `make TARGET` of a code block (continued lines joined, comments off, `&&` split), and
    inline code that starts with one, or with a command's name (`train --fold all`). An older
    name __main__ still takes (`bench-input`) stands for the command it names."""
    for at, block in doc.blocks():
        for line in re.split(r"(?<!\\)\n", block):
            for part in re.split(r"(?:^|\s)#", line, maxsplit=1)[0].split("&&"):
                ran = RUN.search(part)
                if ran:
                    yield at, named(ran[1]) or f"make {ran[2]}", part[ran.end() :]
            at += len(line) + 1
    for at, span in doc.spans():
        ran = RUN.match(span)
        first = (span.split() or [""])[0]
        if ran:
            yield at, named(ran[1]) or f"make {ran[2]}", span[ran.end() :]
        elif first in COMMANDS or first in ALIASES:
            yield at, named(first), span[len(first) :]


def named(command: str | None) -> str | None:
    """The command an older name stands for (`bench-input`: bench); any other name as it is."""
    return ALIASES[command][0] if command in ALIASES else command


def test_every_flag_a_doc_names_is_a_flag_of_its_command():
    """`train --fold-seed 3` in a doc means train takes --fold-seed; a bare `--fold-seed`, that
    some command does; `make train FLAGS=...` passes them to train. The parsers are __main__'s
    own, so a renamed or removed flag fails here, not in a reader's shell."""
    flags = options()
    every = set().union(*flags.values())
    targets = set(re.findall(r"^([a-z][\w-]*):", (PROJECT / "Makefile").read_text(), re.MULTILINE))
    wrong = []
    for doc in docs():
        for at, command, rest in command_lines(doc):
            target = command.removeprefix("make ")
            if command.startswith("make ") and target not in targets:
                wrong.append(f"{doc.where(at)}: `make {target}`: no such target in the Makefile")
                continue
            known = flags.get(target, every)
            if not command.startswith("make ") and target not in flags:
                wrong.append(f"{doc.where(at)}: `{command}`: no such command")
            for name in FLAG.findall(rest):
                if name not in known:
                    wrong.append(f"{doc.where(at)}: {name}: not a flag of `{target}`")
        for at, span in doc.spans():
            if span.startswith("--"):
                wrong += [
                    f"{doc.where(at)}: {name}: no command has it"
                    for name in FLAG.findall(span)
                    if name not in every
                ]
    assert not wrong, "\n".join(wrong)


def test_every_config_field_a_doc_names_exists():
    """`Config.x`, `cfg.x` anywhere (`run.cfg.x` too), and `x=` given to Config(...): a field
    (or a property) Config has."""
    known = {field.name for field in dataclasses.fields(Config)} | set(dir(Config))
    wrong = []
    for doc in docs():
        for field in re.finditer(r"\b(?:Config|cfg)\.(\w+)", doc.text):
            if field[1] not in known:
                wrong.append(f"{doc.where(field.start())}: {field[0]}: Config has no such field")
        for call in re.finditer(r"\bConfig\(([^()]*)\)", doc.text):
            for given in re.finditer(r"\b(\w+)=(?!=)", call[1]):
                if given[1] not in known:
                    wrong.append(f"{doc.where(call.start())}: {given[1]}=: not a Config field")
    assert not wrong, "\n".join(wrong)


def arguments(text: str, start: int) -> str:
    """The arguments of the call whose `(` is at `start`, up to its own `)`."""
    depth = 0
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return text[start + 1 : index]
    return text[start + 1 :]


def bound(function, given: str) -> str:
    """Why a call with these arguments would not bind to `function`; empty where it would.
    Each argument is a placeholder: what is checked is their number and keywords."""
    parts = [part.strip() for part in split_top_level(given) if part.strip()]
    if any(part.startswith("*") or part == "..." for part in parts):
        return ""
    keywords = {part.split("=")[0] for part in parts if re.match(r"\w+=(?!=)", part)}
    positional = len(parts) - len(keywords)
    try:
        inspect.signature(function).bind(*[None] * positional, **dict.fromkeys(keywords))
    except TypeError as error:
        return f"{error}; its signature is {inspect.signature(function)}"
    return ""


def split_top_level(text: str) -> list[str]:
    """`a, f(b, c), d` as its three arguments."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += (char in "([{") - (char in ")]}")
        if char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    return [*parts, text[start:]]


def resolved(dotted: str):
    """The object a dotted name of the package names (None where nothing does)."""
    words = dotted.split(".")
    for cut in range(len(words), 0, -1):
        try:
            found = importlib.import_module(".".join(words[:cut]))
        except ImportError:
            continue
        for word in words[cut:]:
            found = getattr(found, word, None)
        return found
    return None


def calls(doc: Doc):
    """(where, the dotted name in the package, its arguments) of each call a doc shows: in a
    code block, of a name it imports from the package (`from PACKAGE.x import f`, then `f(...)`
    or, for a module, `f.g(...)`), comments included; inline, a call qualified from the
    package's top (`tools.bench_train.step_seconds(cfg, variants)`)."""
    for at, block in doc.blocks():
        imported = {}
        for line in re.finditer(rf"^from ({PACKAGE}[\w.]*) import ([\w, ]+)$", block, re.MULTILINE):
            imported |= {name.strip(): f"{line[1]}.{name.strip()}" for name in line[2].split(",")}
        for call in re.finditer(r"\b(\w+)((?:\.\w+)*)\(", block):
            if call[1] in imported:
                given = arguments(block, call.end() - 1)
                yield at + call.start(), imported[call[1]] + call[2], given
    for at, span in doc.spans():
        call = re.fullmatch(r"([a-z_]\w*(?:\.\w+)+)\((.*)\)", span)
        if call and resolved(f"{PACKAGE}.{call[1].split('.')[0]}") is not None:
            yield at, f"{PACKAGE}.{call[1]}", call[2]


def test_every_call_a_doc_shows_binds_to_the_functions_signature():
    """A call a reader copies from a doc, `train(cfg, found)`, binds to train's signature;
    a function removed, renamed or given other parameters fails here."""
    wrong = []
    for doc in docs():
        for at, dotted, given in calls(doc):
            function = resolved(dotted)
            if not callable(function):
                wrong.append(f"{doc.where(at)}: {dotted}: no such function")
                continue
            why = bound(function, given)
            if why:
                wrong.append(f"{doc.where(at)}: {dotted}({given}): {why}")
    assert not wrong, "\n".join(wrong)


def project_files() -> tuple[set[str], set[str]]:
    """The names and the suffixes of the project's own files: at its top, and shipped."""
    own = [*PROJECT.iterdir(), *(path for top in SHIPPED for path in (PROJECT / top).rglob("*"))]
    files = [path for path in own if path.is_file()]
    return {path.name for path in files}, {path.suffix for path in files} - {""}


def named_paths(doc: Doc):
    """(where, path, the folder it is relative to or None) of each backticked path, each link,
    and each entry of a file tree (docs/layout.md's: a code block that starts with a folder),
    the folders above it joined."""
    for at, span in doc.spans():
        for word in span.split():
            if ":" not in word:  # gs://, kaggle:datasets/..., a URL
                yield at, word.strip("()[]{},;'\""), None
    for link in re.finditer(r"\]\(([^)#\s]+)", doc.text):
        if ":" not in link[1]:
            yield link.start(1), link[1], doc.path.parent
    for at, block in doc.blocks():
        folders: list[str] = []
        for line in block.splitlines(keepends=True) if re.match(r"[\w.-]+/\n", block) else []:
            entry = re.match(r"([│ ]*)[├└]── (\S+)", line)
            if entry:
                depth = len(entry[1]) // 4
                folders[depth:] = [entry[2].rstrip("/")]
                yield at, "/".join(folders), PROJECT
            at += len(line)


def test_every_file_a_doc_names_exists():
    """A name ending as the project's own files do (`.py`, `.md`, `.txt`, `.toml`; so
    `oof.csv`, `model.json` and the rest a run writes are left out) is a file of the project:
    a bare name (`model.py`) anywhere in it; a path (`runtime/data/steps.py`) where its first
    folder is one of the project's, its package's or its runtime's (so the template
    repository's `benchmarks/` and the `kernel/` a run writes are left out)."""
    names, suffixes = project_files()
    wrong = []
    for doc in docs():
        for at, name, relative_to in named_paths(doc):
            if Path(name).suffix not in suffixes or name.startswith("/") or "<" in name:
                continue
            if relative_to is not None:
                exists = (relative_to / name).exists()
            elif "/" not in name:
                exists = name in names
            else:
                top = name.split("/")[0]
                starts = [base for base in BASES if (base / top).is_dir()]
                exists = not starts or any((base / name).exists() for base in starts)
            if not exists:
                wrong.append(f"{doc.where(at)}: {name}: no such file in the project")
    assert not wrong, "\n".join(wrong)
