"""What a notebook carries: the modules its cells use, followed through the package's own
imports, and no other.

One rule, read from the code: a module imported as a module (`from ..data import metadata`) is
followed where its name is used in code the notebook's run reaches; a name imported from a
module (`from .config import Config`), always. Code the run does not reach stands under an `if`
(or after one that returns) whose test reads only the run's settings and data (`cfg`, `data`,
`run`, `trains_from`, `tests_from`, config.py's functions: `if data.uses_metadata:`) and is false
for this run. A test that reads anything else cannot be told here: what it guards is followed.
A module not carried imports as a stand-in that says so when used (notebook.py's SETUP). A cell
whose every statement is such a false `if` does nothing, and the notebook leaves it out.
"""

from __future__ import annotations

import ast
import functools
import types
from pathlib import Path

from ..runtime import config
from ..runtime.config import Config
from ..runtime.stages.run import Run

PACKAGE = Path(__file__).resolve().parents[1]


def modules(run: Run, sources: list[str], offered=frozenset()) -> list[str]:
    """The package's modules, as paths under it, that code `sources` (the cells) reaches with
    the notebook's `run` (its settings, and its data as read, or None where not read: every
    reader is then carried): the modules it imports, what they import in turn, and each one's
    package. A test that reads a field the notebook `offered` (its settings cell lists) could
    turn either way there: its imports are followed, so that a setting it offers works when set."""
    tests = tests_of(run, frozenset(offered))
    found, waiting = set(), [name for source in sources for name in imported(source, "", tests)]
    while waiting:
        name = waiting.pop()
        path = path_of(name)
        if path is None or path in found:
            continue
        found.add(path)
        parent = name.rpartition(".")[0]
        waiting += [parent] if parent else []
        waiting += imported((PACKAGE.parent / path).read_text(), name, tests)
    return sorted(found)


@functools.cache
def path_of(name: str) -> str | None:
    """A dotted name of the package as its file's path under the package's parent, or None
    where it names no module (a function imported from one)."""
    parts = name.split(".")
    if parts[0] != PACKAGE.name:
        return None
    folder = PACKAGE.parent.joinpath(*parts)
    for path in (folder / "__init__.py", folder.with_suffix(".py")):
        if path.is_file():
            return path.relative_to(PACKAGE.parent).as_posix()
    return None


def imported(source: str, module: str, tests: dict) -> list[str]:
    """The dotted names `source` (the module `module`, "" for a cell) imports and uses where it
    runs with the names tests read (`tests_of`); `from X import Y` gives X, and X.Y where Y is
    a module used there."""
    imported_here, uses = parsed(source)
    failing = {gates: fails(gates, tests) for gates in {gates for _, gates in uses}}
    used = {name for name, gates in uses if not failing[gates]}
    names = []
    for node, gates in imported_here:
        if fails(gates, tests):
            continue  # under a test that fails for this config: a feature left off
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names if alias.name.split(".")[0] in used]
            continue
        base = module if path_of(module) and path_of(module).endswith("__init__.py") else ""
        base = base or module.rpartition(".")[0]
        if node.level:
            base = ".".join(base.split(".")[: len(base.split(".")) - node.level + 1])
            base = ".".join(part for part in (base, node.module) if part)
        else:
            base = node.module or ""
        for alias in node.names:
            dotted = f"{base}.{alias.name}"
            if path_of(dotted) is None:  # a name of the module: bound when it is imported
                names.append(base)
            elif (alias.asname or alias.name) in used:
                names += [base, dotted]
    return names


@functools.cache
def parsed(source: str) -> tuple[list, frozenset[tuple[str, tuple]]]:
    """A module's imports, and the names it reads (not its functions' locals), each with the
    tests it stands under: parsed once, however many runs are followed through it."""
    body = ast.parse(source).body
    uses = frozenset(
        (name, tested)
        for expression, gates, local in reached(body)
        for name, tested in loaded(expression, gates)
        if name not in local
    )
    return list(imports(body)), uses


def loaded(node: ast.AST, gates: tuple):
    """The names an expression reads, each with the tests it stands under: an `a if test else
    b` gates `a` and `b` as an `if` does."""
    if isinstance(node, ast.IfExp):
        yield from loaded(node.test, gates)
        yield from loaded(node.body, (*gates, (node.test, True)))
        yield from loaded(node.orelse, (*gates, (node.test, False)))
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        yield node.id, gates
    for child in ast.iter_child_nodes(node):
        yield from loaded(child, gates)


def fails(gates: tuple, tests: dict) -> bool:
    return any(holds(test, tests) is (not wanted) for test, wanted in gates)


def imports(body: list[ast.stmt], tests: tuple = ()):
    """Every import in these statements, with the `if` tests it stands under (`reached`)."""
    for node, gates, _ in statements(body, tests):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, gates


def reached(body: list[ast.stmt]):
    """Every expression these statements run, with the `if` tests it stands under and the names
    its function binds; not the annotations, which run nowhere (`from __future__ import
    annotations`)."""
    for node, gates, local in statements(body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            children = [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]
        elif isinstance(node, ast.AnnAssign):
            children = [node.value]
        else:  # its expressions, and a `with`'s items; not the statements it holds
            children = list(ast.iter_child_nodes(node))
        children += [child.type for child in getattr(node, "handlers", []) if child.type]
        kinds = ast.stmt | ast.excepthandler | ast.arguments
        yield from ((c, gates, local) for c in children if c and not isinstance(c, kinds))


def statements(body: list[ast.stmt], tests: tuple = (), local: frozenset = frozenset()):
    """Every statement in these, with the `if` tests it stands under: (test, True) in an `if`'s
    body; (test, False) in its `else`, and after an `if` that returns (a guard clause: `if not
    cfg.pseudo_labels: return ...`); and the names its function binds (a local `images` is
    not the module)."""
    for node in body:
        yield node, tests, local
        if isinstance(node, ast.If):
            yield from statements(node.body, (*tests, (node.test, True)), local)
            yield from statements(node.orelse, (*tests, (node.test, False)), local)
            if not node.orelse and isinstance(node.body[-1], ast.Return | ast.Raise):
                tests = (*tests, (node.test, False))  # what follows runs where it failed
            continue
        inner = local
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner = local | {arg.arg for arg in ast.walk(node.args) if isinstance(arg, ast.arg)}
            inner |= {
                name.id
                for name in ast.walk(node)
                if isinstance(name, ast.Name) and not isinstance(name.ctx, ast.Load)
            }
        for block in blocks(node):
            yield from statements(block, tests, inner)


def blocks(node: ast.stmt):
    """The blocks of statements a statement holds: a function's body, a loop's, a `try`'s and
    each of its handlers'."""
    for _, value in ast.iter_fields(node):
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value
        elif isinstance(value, list):
            yield from (item.body for item in value if isinstance(item, ast.excepthandler))


class Reading:
    """A config that notes the fields a test reads: one the notebook offers makes it open."""

    def __init__(self, cfg: Config, offered: frozenset[str]):
        self.__dict__.update(cfg=cfg, offered=offered, read=set())

    def __getattr__(self, name: str):
        self.read.add(name)
        return getattr(self.cfg, name)


def tests_of(run: Run, offered: frozenset[str] = frozenset()) -> dict:
    """The names a test may read, as the notebook's run holds them: config.py's, `cfg` (noting
    the fields read), `data`, `run`, and the kinds of data read."""
    cfg, data = Reading(run.cfg, offered), run.data
    kinds = {"trains_from": data.trains_from, "tests_from": data.tests_from} if data else {}
    seen = types.SimpleNamespace(cfg=cfg, data=data)
    return {**vars(config), "cfg": cfg, "data": data, "run": seen, **kinds, "TYPE_CHECKING": False}


def holds(test: ast.expr, namespace: dict) -> bool | None:
    """Whether an `if`'s test holds for the notebook's run (`tests_of`), where it reads only
    what that holds; None where it reads anything else, or a field the notebook offers."""
    cfg = namespace["cfg"]
    cfg.read.clear()
    try:
        held = bool(eval(compiled(test), dict(namespace)))
    except Exception:  # noqa: BLE001 (a name only the running code has): the import is followed
        return None
    return None if cfg.read & cfg.offered else held


@functools.cache
def compiled(test: ast.expr):
    return compile(ast.Expression(test), "<test>", "eval")


def does_nothing(source: str, run: Run) -> bool:
    """Whether a cell does nothing with the notebook's `run`: all it does (its imports aside)
    stands under `if` tests that fail for it."""
    tests = tests_of(run)
    done = [
        node for node in ast.parse(source).body if not isinstance(node, ast.Import | ast.ImportFrom)
    ]
    return bool(done) and all(
        isinstance(node, ast.If) and not node.orelse and holds(node.test, tests) is False
        for node in done
    )
