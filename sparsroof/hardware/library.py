"""Finding and reading hardware specs: the bundled ones (``hwspecs/`` at the top of the
repository, shipped inside the package) by name or alias, and the user's own YAML files
by path, wherever a bundled name is accepted. YAML is read with a safe loader that
refuses a key written twice.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from ..errors import OptionError, SpecError, UnknownSpecError, meant
from ..userfile import MAX_CONFIG_BYTES, load_yaml, read_text, shown
from ..userfile.yamlfile import safe_loader
from .schema import check_spec
from .spec import HwSpec

__all__ = ["bundled_names", "load_spec", "parse_spec", "read_spec_file", "validate_file"]


def parse_spec(data: Any, origin: str) -> HwSpec:
    """Validate a spec already read from YAML; raise the first problem found.

    ``origin`` names the spec in messages. When there are several problems the message
    says how many more ``sparsroof hw validate`` would list.
    """
    spec, problems = check_spec(data, origin)
    if spec is None:
        first = problems[0]
        more = len(problems) - 1
        if more:
            first = SpecError(first.source, f"{first.problem} (and {more} more problem"
                              f"{'s' if more > 1 else ''}: see 'sparsroof hw validate')",
                              first.key)
        raise first
    return spec


def _bundled_dir() -> Any:
    """The bundled specs' folder: beside this package in a file system (importlib's
    resources, which also read a zip, cost 10 ms to import)."""
    folder = Path(__file__).resolve().parent.parent / "hwspecs"
    if folder.is_dir():
        return folder
    from importlib import resources

    return resources.files("sparsroof") / "hwspecs"


def _bundled_files() -> dict[str, Any]:
    return {p.name[: -len(".yaml")]: p for p in _bundled_dir().iterdir()
            if p.name.endswith(".yaml")}


@functools.cache
def _strict_loader() -> Any:
    """PyYAML's safe loader, refusing a key written twice in one mapping (a silent
    overwrite in plain YAML, and in a spec almost always a copy-paste slip). Made when a
    spec is first parsed, so that PyYAML is imported only then."""
    import yaml

    safe = safe_loader()

    class StrictLoader(safe):  # type: ignore[misc, valid-type]
        pass

    def no_duplicates(loader: Any, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if isinstance(key, Hashable):
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {shown(key)} written twice", key_node.start_mark)
                seen.add(key)
        return safe.construct_mapping(loader, node, deep)

    StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                 no_duplicates)
    return StrictLoader


#: the modules whose code turns a spec's YAML into its data: a kept spec is parsed again
#: when one of them changes (:mod:`sparsroof.caching.parsed`)
_PARSER = (__name__, "sparsroof.userfile.yamlfile", "yaml")


def _read_yaml(text: str, origin: str) -> Any:
    """The data of a spec's YAML text, its aliases bounded (see
    :func:`~sparsroof.userfile.load_yaml`)."""
    return load_yaml(text, lambda problem: SpecError(origin, problem),
                     loader=_strict_loader())[0]


@functools.cache
def _aliases(mentioning: str = "") -> dict[str, str]:
    """Alias -> bundled name, from the specs whose text holds ``mentioning`` as a whole
    word (every spec by default): an alias is written in its spec's text, a YAML scalar
    that no letter, digit, ``_``, ``.`` or ``-`` adjoins, so a name is looked up without
    parsing the specs that cannot hold it ("a100" is not in "a100-40gb")."""
    word = re.compile(rf"(?<![\w.-]){re.escape(mentioning)}(?![\w.-])") if mentioning else None
    table = {}
    for name, resource in _bundled_files().items():
        text = resource.read_text(encoding="utf-8")
        if word is not None and not word.search(text):
            continue
        data = _bundled(resource, f"{name}.yaml (bundled)", text)
        for alias in (data if isinstance(data, dict) else {}).get("aliases") or ():
            table[str(alias)] = name
    return table


def _bundled(resource: Any, origin: str, text: str | None = None) -> Any:
    """The data of a bundled spec (``text`` where it was read already), parsed once and
    kept (:mod:`sparsroof.caching.parsed`)."""
    from ..caching.parsed import kept

    return kept(resource, lambda: _read_yaml(text if text is not None else
                                             resource.read_text(encoding="utf-8"), origin),
                "spec", _PARSER)


def bundled_names() -> list[str]:
    """Names of the bundled specs (aliases not included)."""
    return sorted(_bundled_files())


def bundled_meaning(name: str, path: str | Path | None = None) -> str | None:
    """The bundled spec that ``name`` names (itself, or the one it is an alias of), or
    None: a user's spec of that name would read as that device in every result. The
    bundled file itself, given as ``path``, names nothing else.

    >>> bundled_meaning("a100"), bundled_meaning("my-gpu")
    ('a100-80gb', None)
    """
    files = _bundled_files()
    meant = name if name in files else _aliases(name).get(name)
    if meant is not None and path is not None:
        try:
            if Path(path).resolve() == Path(str(files[meant])).resolve():
                return None
        except OSError:
            pass
    return meant


def read_spec_file(name_or_path: str | Path) -> tuple[Any, str]:
    """The parsed YAML of a bundled spec (by name or alias) or a user's file, and its origin.

    A bundled name is tried only when the argument is not an existing path and does not end
    in ``.yaml``/``.yml``; an unknown name suggests the closest bundled one.
    """
    text = str(name_or_path)
    if not text.strip():  # the current folder, as a path: never what was meant
        raise UnknownSpecError(repr(text), "no spec of that name: give a bundled name "
                                           "(see 'sparsroof hw list') or a YAML file")
    path = Path(text)
    if path.name.lower().endswith((".mtx", ".mtx.gz", ".smtx")):
        raise SpecError(text, "is a matrix, not a hardware spec (a spec is a bundled name, "
                              "see 'sparsroof hw list', or a YAML file)")
    if path.suffix in (".yaml", ".yml") or os.path.exists(path):  # never raises
        from ..caching.parsed import kept

        def fail(problem: str) -> SpecError:
            if problem == "no such file":  # a usage error, as an unknown name is
                import shlex

                return UnknownSpecError(text, "no such file (a spec of this host: sparsroof "
                                              f"hw probe -o {shlex.quote(text)})")
            return SpecError(text, problem)

        return kept(path, lambda: _read_yaml(read_text(
            path, fail, limit=MAX_CONFIG_BYTES), text), "spec", _PARSER), text
    files = _bundled_files()
    # no alias is a bundled name (the bundled set's test holds it)
    name = bundled_meaning(text) or text
    if name not in files:
        aliases = _aliases()
        known = sorted(files) + sorted(aliases)
        hint = meant(text, known) or f" (bundled: {', '.join(known)})"
        raise UnknownSpecError(text, f"no bundled hardware spec of that name{hint}")
    origin = f"{name}.yaml (bundled)"
    return _bundled(files[name], origin), origin


def load_specs(names: Sequence[str | Path]) -> list[HwSpec]:
    """:func:`load_spec` of each name, each spec once: an alias and the name it stands
    for (``a100``, ``a100-80gb``) are one spec; two different specs of one name are an
    error, since every result is labelled by its spec's name.

    >>> [s.name for s in load_specs(["a100", "h100-sxm", "a100-80gb"])]
    ['a100-80gb', 'h100-sxm']
    """
    found: list[HwSpec] = []
    for name in names:
        spec = load_spec(name)
        same = next((s for s in found if s.name == spec.name), None)
        if same is None:
            found.append(spec)
        elif same != spec:
            raise OptionError(f"{name}: two different specs are named {spec.name!r}: results "
                              "are labelled by name, so give one of them")
    return found


def load_spec(name_or_path: str | Path) -> HwSpec:
    """Load a bundled spec by name or alias, or a user's YAML file by path.

    >>> spec = load_spec("a100")
    >>> spec.name, spec.dram.bandwidth.text
    ('a100-80gb', '2039 GB/s')
    """
    data, origin = read_spec_file(name_or_path)
    return parse_spec(data, origin)


def validate_file(name_or_path: str | Path) -> list[SpecError]:
    """Every problem in one spec (an empty list when it is valid), not just the first."""
    try:
        data, origin = read_spec_file(name_or_path)
    except SpecError as err:
        return [err]
    return check_spec(data, origin)[1]
