"""Reading YAML safely and within bounds.

PyYAML's safe loader builds an alias (``*name``) as a second reference to one object, so
loading a file of nested aliases is cheap; but anything that then walks the data (a
check, ``repr`` in an error message, a copy) walks every alias as a value of its own, and
ten levels of ten aliases are ten billion values. The node graph is therefore counted
before anything is built: a document whose aliases expand to more than
:data:`MAX_YAML_VALUES` values, or refer to the value that holds them, is refused. Merge
keys (``<<: *base``) are counted the same way, as the copies they make.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .files import MAX_CONFIG_BYTES, Fail, read_text

if TYPE_CHECKING:
    import yaml

__all__ = ["MAX_YAML_VALUES", "safe_loader", "load_yaml", "read_yaml"]

#: most values (scalars, lists and mappings, each alias counted as the copy it stands
#: for) a spec, budget or manifest may hold; the bundled ones hold a few hundred
MAX_YAML_VALUES = 100_000


@cache
def safe_loader() -> Any:
    """PyYAML's safe loader, the C one where it is built (PyYAML is imported when a YAML
    file is first read: a command that reads none, or finds what it read kept, does not
    pay its 0.02 s)."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def expanded_size(root: yaml.Node, limit: int = MAX_YAML_VALUES) -> int | None:
    """How many values the document under ``root`` holds once every alias is replaced by
    a copy of what it names, counted up to ``limit + 1`` (the count stops there: no more
    than ``limit`` distinct nodes are looked at); None when an alias refers to a value
    that holds it.

    >>> import yaml
    >>> expanded_size(yaml.compose("a: &x [1, 2]\\nb: [*x, *x]"))  # 1 + (1 + 3) + (1 + 7)
    13
    >>> expanded_size(yaml.compose("&x [*x]")) is None
    True
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # the ancestors of the node being looked at
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
            if sizes[key] > limit:  # the root holds at least as many
                return limit + 1
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            return None
        if len(sizes) + len(open_nodes) >= limit:
            return limit + 1
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)
    return sizes[id(root)]


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
#: longest number a YAML file may write (YAML 1.1 reads 1:2:3 as a base-60 integer, and
#: building one of a million parts takes hours)
MAX_NUMBER_CHARS = 1000


def _long_number(root: yaml.Node) -> bool:
    """Whether a scalar under ``root`` that YAML reads as a number is longer than
    :data:`MAX_NUMBER_CHARS` (each distinct node looked at once)."""
    import yaml

    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if node.tag in _NUMBER_TAGS and len(node.value) > MAX_NUMBER_CHARS:
                return True
        else:
            stack.extend(_children(node))
    return False


def _malformed(err: yaml.YAMLError) -> str:
    """The parser's problem and where it met it; a reader's error (bytes that are not
    text: a binary file) says which byte, at which offset."""
    mark = getattr(err, "problem_mark", None)
    where = f"line {mark.line + 1}: " if mark is not None else ""
    problem = getattr(err, "problem", None)
    if problem is None and getattr(err, "reason", None):  # yaml.reader.ReaderError
        character = getattr(err, "character", None)
        what = (f"byte {character:#04x}" if isinstance(character, int) else
                f"character {character!r}")
        problem = f"{err.reason}: {what} at offset {getattr(err, 'position', '?')}"  # type: ignore[attr-defined]
    return f"{where}malformed YAML: {problem or 'not YAML'}"


def load_yaml(text: str, fail: Fail, *, loader: Any = None,
              limit: int = MAX_YAML_VALUES) -> tuple[Any, yaml.Node | None]:
    """The data of the YAML document ``text`` and its node graph (for line numbers),
    both None for an empty document. Malformed YAML, more than one document, and aliases
    that expand past ``limit`` values or refer to themselves, and numbers longer than
    :data:`MAX_NUMBER_CHARS` raise ``fail(problem)``;
    the message never holds the expanded value.

    >>> load_yaml("a: [1, 2]", ValueError)[0]
    {'a': [1, 2]}
    >>> bomb = "a: &a [x, x]\\n" + "".join(f"{c}: &{c} [*{p}, *{p}]\\n"
    ...                                   for p, c in zip("abcdefghijklmnopq", "bcdefghijklmnopqr"))
    >>> load_yaml(bomb, ValueError)
    Traceback (most recent call last):
    ...
    ValueError: holds more than 100,000 values, counting each alias (*name) as a copy of \
what it names: write fewer values, or use fewer aliases
    """
    import yaml

    parser = (loader or safe_loader())(text)
    try:
        node = parser.get_single_node()
        if node is None:
            return None, None
        _check_size(node, fail, limit)
        try:
            return parser.construct_document(node), node
        except (ValueError, OverflowError) as err:
            # a value YAML's rules accept but Python cannot build: a date such as
            # 2001-02-30, an integer written with underscores past 4,300 digits
            raise fail(f"holds a value that cannot be read ({str(err)[:80]})") from None
    except yaml.YAMLError as err:
        raise fail(_malformed(err)) from None
    finally:
        parser.dispose()


def _check_size(node: yaml.Node, fail: Fail, limit: int) -> None:
    size = expanded_size(node, limit)
    if size is None:
        raise fail("an alias (*name) refers to the value that holds it: a value cannot "
                   "contain itself")
    if size > limit:
        raise fail(f"holds more than {limit:,} values, counting each alias (*name) as a "
                   "copy of what it names: write fewer values, or use fewer aliases")
    if _long_number(node):
        raise fail(f"holds a number of more than {MAX_NUMBER_CHARS:,} characters")


def read_yaml(path: str | Path, fail: Fail, *, loader: Any = None,
              limit: int = MAX_CONFIG_BYTES) -> tuple[Any, yaml.Node | None]:
    """The YAML file at ``path``, read as :func:`~sparsroof.userfile.read_text` reads a
    file (at most ``limit`` bytes) and loaded by :func:`load_yaml`."""
    return load_yaml(read_text(path, fail, limit=limit), fail, loader=loader)
