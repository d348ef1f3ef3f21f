"""The package's layout: imports point one way, with no cycles, and the heavy or
presentational libraries stay in the layer that needs them.

The graph is read from the source (every ``import`` and ``from ... import``, those inside
functions included), so a lazy import cannot hide an upward edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ..conftest import fresh_python

PACKAGE = Path(__file__).resolve().parents[2] / "sparsroof"

#: layer of each top-level room, highest first; a room imports only rooms of lower layers
#: (rooms of one layer are siblings and do not import each other)
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "__main__"),
    ("cli",),
    ("plot",),
    ("report",),
    ("advisor", "host", "whatif", "batch", "ci"),
    ("compare",),  # measured runs, read by ci's budgets as by compare itself
    ("analysis",),
    ("model",),
    ("structure",),
    ("matrix", "hardware"),
    ("passes", "userfile"),
    ("units", "caching"),
    ("errors", "_version"),
)
LAYER = {room: depth for depth, rooms in enumerate(LAYERS) for room in rooms}

#: third-party packages that only some rooms may import
CONFINED = {"click": {"cli"}, "matplotlib": {"plot"}, "rich": {"report", "cli"},
            "numba": {"passes"}}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, text: str | None = None) -> set[str]:
    """Absolute names of everything ``path`` (or ``text`` standing at ``path``) imports:
    modules, or names in them."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


#: modules that import others by a name in a table (a lazy public name, a lazy command):
#: module -> (its table, the package the table's names are relative to)
STRING_IMPORTS = {"sparsroof": ("_HOMES", "sparsroof"),
                  "sparsroof.plot": ("_HOMES", "sparsroof.plot"),
                  "sparsroof.cli.group": ("COMMANDS", "sparsroof.cli")}


def _string_imports() -> dict[str, set[str]]:
    """module -> the modules its tables name (imported by ``import_module`` at run time)."""
    import importlib

    found = {}
    for module, (table, base) in STRING_IMPORTS.items():
        names = getattr(importlib.import_module(module), table).values()
        found[module] = {f"{base}.{name}" for name in names}
    return found


def _graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports, by an import statement or by name."""
    paths = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph = {name: {t for t in _imports(path) if t in paths and t != name}
             for name, path in paths.items()}
    for module, targets in _string_imports().items():
        graph[module] |= targets
    return graph


def test_every_import_by_name_is_a_module_that_has_it() -> None:
    """The tables of lazy names are imports the statements do not show: each names a
    module of the package that defines what the table promises."""
    import importlib

    import sparsroof
    import sparsroof.cli
    import sparsroof.plot

    for face in (sparsroof, sparsroof.plot):
        for name, home in face._HOMES.items():
            module = importlib.import_module(f"{face.__name__}.{home}")
            assert hasattr(module, name), f"{face.__name__}.{name}: not in {module.__name__}"
    for name, home in sparsroof.cli.COMMANDS.items():
        module = importlib.import_module(f"sparsroof.cli.{home}")
        assert module.command.name == name, (name, home)


def test_importing_the_package_changes_nothing_in_the_process() -> None:
    """``import sparsroof`` (the API's first step) sets no environment variable and imports
    neither numpy nor numba."""
    import subprocess
    import sys

    code = ("import os, sys; before = dict(os.environ); import sparsroof\n"
            "assert dict(os.environ) == before, set(os.environ) ^ set(before)\n"
            "assert 'numba' not in sys.modules and 'numpy' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_room_has_a_layer() -> None:
    rooms = {_room(m) for m in _graph()}
    assert rooms <= set(LAYER), f"rooms with no layer: {sorted(rooms - set(LAYER))}"


def test_imports_point_down() -> None:
    wrong = [f"{a} -> {b}" for a, targets in _graph().items() for b in sorted(targets)
             if _room(a) != _room(b) and LAYER[_room(a)] >= LAYER[_room(b)]]
    assert not wrong, "imports that point up or sideways:\n" + "\n".join(wrong)


def test_no_module_imports_another_modules_private_name() -> None:
    """A name with a leading underscore belongs to its module: what another module needs
    is made public under a name that says what it is. Private modules (``_native``,
    ``_jit``, ``_version``) may be imported; ``__future__`` names are not private."""
    modules = {_module(p) for p in PACKAGE.rglob("*.py")} | {
        f"{_module(p.parent / '__init__.py')}.{p.name.split('.')[0]}"
        for p in PACKAGE.rglob("_native*")}
    found = []
    for path in PACKAGE.rglob("*.py"):
        own = _module(path)
        for name in _imports(path):
            target, _, last = name.rpartition(".")
            if (last.startswith("_") and not last.startswith("__") and name not in modules
                    and target != own and target.startswith("sparsroof")):
                found.append(f"{own} imports {name}")
    assert found == []


def test_no_import_cycles() -> None:
    graph = _graph()
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    cycles: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            # a package's face re-exports its modules: importing it is not a dependency
            # of those modules on one another
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*path[path.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


@pytest.mark.parametrize("library", sorted(CONFINED))
def test_confined_libraries(library: str) -> None:
    outside = sorted(
        str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*.py")
        if _room(_module(p)) not in CONFINED[library]
        and any(t == library or t.startswith(library + ".") for t in _imports(p)))
    assert not outside, f"{library} is imported outside {sorted(CONFINED[library])}: {outside}"


def test_the_reader_sees_a_lazy_upward_import() -> None:
    """A relative import inside a function, from model/ up to report/, is read as such
    (so the direction test would flag it)."""
    fake = PACKAGE / "model" / "lazy.py"
    code = "def f():\n    from ..report import analysis\n    return analysis\n"
    found = _imports(fake, code)
    assert "sparsroof.report.analysis" in found
    assert LAYER[_room(_module(fake))] > LAYER[_room("sparsroof.report.analysis")]


def test_help_lists_each_command_by_its_own_summary() -> None:
    """``sparsroof --help`` lists the commands without importing them: the summaries it
    shows must be what each command's help would give."""
    import click

    from sparsroof.cli import COMMANDS, SUMMARIES, cli, short_help

    assert set(SUMMARIES) == set(COMMANDS)
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        for limit in (30, 45, 80, 200):
            assert short_help(name, limit) == command.get_short_help_str(limit), name


def test_help_imports_no_command_and_no_numpy() -> None:

    code = ("import sys; from sparsroof.cli import cli; from click.testing import CliRunner; "
            "CliRunner().invoke(cli, ['--help']); "
            "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith('sparsroof.cli.')"
            " and m not in ('sparsroof.cli.guard', 'sparsroof.cli.group')))")
    out = fresh_python(code, check=True).stdout
    assert out.strip() == "[]"


def test_every_schema_version_has_its_history_in_the_docs() -> None:
    """Each kind of document counts its versions from 1 without a gap, says what each
    changed, and docs/models.md shows the same history."""
    from sparsroof._version import SCHEMA_HISTORY, SCHEMA_VERSIONS

    docs = (PACKAGE.parent / "docs" / "models.md").read_text(encoding="utf-8")
    for kind, history in SCHEMA_HISTORY.items():
        assert [v for v, _ in history] == list(range(1, len(history) + 1)), kind
        assert SCHEMA_VERSIONS[kind] == len(history)
        for version, what in history:
            assert what and f"| `{kind}` | {version} | {what} |" in docs, (kind, version)


#: what only report/ builds: tables, and JSON and CSV documents
DOCUMENT_BUILDERS = ("json", "csv", "rich.table", "sparsroof._version.envelope",
                     "sparsroof.report.tables", "sparsroof.report.document")


def test_the_command_line_only_parses_calls_and_renders() -> None:
    """The CLI turns options into calls and prints what report/ made of the results: no
    table, JSON or CSV is built in cli/."""
    found = sorted(
        f"{p.relative_to(PACKAGE.parent)} imports {name}"
        for p in (PACKAGE / "cli").rglob("*.py") for name in _imports(p)
        if any(name == b or name.startswith(b + ".") for b in DOCUMENT_BUILDERS))
    assert not found, "\n".join(found)


def test_the_document_rule_sees_a_table_built_in_the_cli() -> None:
    code = "def f():\n    from ..report.tables import fitted_table\n    import json\n"
    found = _imports(PACKAGE / "cli" / "made_up.py", code)
    assert {"json", "sparsroof.report.tables"} <= found


#: rooms that present another room's results: they may name a module after that room's
PRESENTING = {"cli", "report", "plot"}


def test_a_module_name_belongs_to_one_room() -> None:
    """A module's file name tells its room: it appears in at most one room besides the
    command line, report/ and plot/, which mirror what they show (cli/bench.py,
    report/bench.py, host/bench.py)."""
    rooms: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            rooms.setdefault(path.name, set()).add(_room(_module(path)))
    shared = {name: sorted(found) for name, found in rooms.items()
              if len(found - PRESENTING) > 1}
    assert not shared, f"one module name in several rooms: {shared}"


def test_a_public_class_name_is_defined_once() -> None:
    """Two rooms do not each define a ``Summary`` or an ``Outcome``: the name of a public
    class says which one it is."""
    defined: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                defined.setdefault(node.name, []).append(_module(path))
    twice = {name: where for name, where in defined.items() if len(where) > 1}
    assert not twice, f"public classes defined in several modules: {twice}"


def test_the_public_names_agree() -> None:
    """A package face names its lazy public names in its table (``_HOMES``), in the
    imports that type checkers read and in ``__all__`` (which the linter reads as
    written): the three agree, and every public name resolves."""
    import sparsroof
    import sparsroof.plot

    for face in (sparsroof, sparsroof.plot):
        path = Path(face.__file__ or "")
        checked: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom):
                        checked.update(a.asname or a.name for a in inner.names)
        assert set(face._HOMES) <= checked, set(face._HOMES) - checked
        assert set(face._HOMES) <= set(face.__all__), set(face._HOMES) - set(face.__all__)
        for name in face.__all__:
            assert getattr(face, name) is not None, name
    assert set(sparsroof.__all__) == {"__version__", *sparsroof._HOMES}


def test_tests_live_beside_the_room_they_test() -> None:
    """Each test file is in the folder of the package it tests (``tests/host/`` for
    ``sparsroof/host/``), or in ``tests/project/`` for what spans the project (the
    layout, the documents' examples and links, units)."""
    tests = PACKAGE.parent / "tests"
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    loose = sorted(p.name for p in tests.glob("test_*.py"))
    assert not loose, f"test files outside a package folder: {loose}"
    folders = {p.parent.name for p in tests.rglob("test_*.py")}
    assert folders <= rooms | {"project"}, folders - rooms - {"project"}
