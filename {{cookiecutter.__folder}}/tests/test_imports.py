"""Imports point one way, from the commands down to the helpers: read from the source (every
import, those inside functions too; not those under `if TYPE_CHECKING:`, which never run), no
module of the package imports another that imports it back, by any path."""

import ast
from pathlib import Path

import pytest
from conftest import PROJECT

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it


PACKAGE = PROJECT / "{{ cookiecutter.package }}"


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def run_time_nodes(tree: ast.AST):
    """Every node but those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        yield node
        yield from run_time_nodes(node)


def imports_of(name: str) -> dict[str, list[str]]:
    """The package's modules `name` imports, each with the names it takes from it."""
    path = MODULES[name]
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: dict[str, list[str]] = {}
    for node in run_time_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                module = f"{target}.{alias.name}"
                module = module if module in MODULES else target
                if module in MODULES and module != name:
                    found.setdefault(module, []).append(alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    found.setdefault(alias.name, [])
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def a_cycle() -> list[str]:
    """One chain of imports that comes back where it started, or []."""
    done: set[str] = set()

    def walk(name: str, path: list[str]) -> list[str]:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return []
        for imported in GRAPH[name]:
            cycle = walk(imported, [*path, name])
            if cycle:
                return cycle
        done.add(name)
        return []

    for name in MODULES:
        cycle = walk(name, [])
        if cycle:
            return cycle
    return []


def test_no_module_imports_itself_back_by_any_path():
    assert len(MODULES) > 50 and GRAPH["{{ cookiecutter.package }}.__main__"]  # the package was read
    cycle = a_cycle()
    assert not cycle, "an import cycle: " + " -> ".join(cycle)


def test_user_error_comes_from_errors_and_config_imports_only_the_leaves():
    """config.py imports errors.py and registries that import nothing of the package's but
    errors.py; every module takes UserError from errors.py, where it lives."""
    errors = "{{ cookiecutter.package }}.runtime.errors"
    config = "{{ cookiecutter.package }}.runtime.config"
    for imported in GRAPH[config]:
        assert set(GRAPH[imported]) <= {errors}, f"config imports {imported}, which imports more"
    from_config = [name for name, took in GRAPH.items() if "UserError" in took.get(config, [])]
    assert not from_config, f"UserError taken from config.py by {from_config}"
