"""Mutations of the user's text files (CSV, JSON, YAML), for ``test_fuzz_inputs.py``.

Two kinds: the byte mutations of :mod:`tests.mutate` (flipped bits, NULs, cut files,
repeated chunks, huge numbers), and mutations that know the format: a value of a JSON
or YAML document, or a cell of a CSV table, replaced by a hostile one (the wrong type,
an infinity, a number of 400 digits, a long string, a deep list), and YAML aliases that
multiply a value. Each is a function of a random generator and the file's bytes.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import random
from collections.abc import Callable
from typing import Any

import yaml

from sparsroof.userfile.yamlfile import expanded_size

from .mutate import MUTATIONS as BYTE_MUTATIONS

#: values that sit at the edges of what a reader takes: wrong types, out of range
HOSTILE: tuple[Any, ...] = (
    True, False, None, 0, -1, 1, 2.5, 1e308, -1e308, 5e-324, float("inf"), float("nan"),
    10**400, "abc", "false", "true", "", " ", "1e400", "0x10", "inf", "nan", "2:4",
    "1:10000000", "x" * 5000, [], [1], {}, {"a": 1}, [[[[[]]]]], "/dev/zero", "../" * 20,
    "*", "**/*.mtx", "/**/*.mtx", "9" * 401, "-0", "1e-400", "μs", "\u202e", "a\nb",
)
#: CSV cells of the same kind, as text
HOSTILE_CELLS = ("", " ", "true", "false", "0", "-1", "2.5", "1e308", "1e400", "-1e400", "inf",
                 "nan", "9" * 401, "0" * 5000 + "1", "abc", "x" * 5000, "\"", "a,b", "1:10000000",
                 "2:4", "block99999999999", "/dev/zero", "\0", "spmm", "coo", "fp32", "sync")

Mutation = Callable[[random.Random, bytes], bytes]


def _nodes(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every node of a JSON-like document (the root's is ())."""
    found = [path]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _nodes(value, (*path, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found += _nodes(value, (*path, i))
    return found


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


def mutate_document(rng: random.Random, doc: Any) -> Any:
    """A copy of ``doc`` with one node replaced, removed or repeated."""
    doc = copy.deepcopy(doc)
    path = rng.choice(_nodes(doc))
    action = rng.random()
    if action < 0.7 or not path:
        return _replace(doc, path, copy.deepcopy(rng.choice(HOSTILE)))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if action < 0.85:
        del parent[path[-1]]
    elif isinstance(parent, list):
        parent.extend([copy.deepcopy(parent[path[-1]])] * rng.choice((1, 5, 100)))
    else:
        parent[f"{path[-1]}_{rng.randrange(10)}"] = copy.deepcopy(parent[path[-1]])
    return doc


def json_value(rng: random.Random, data: bytes) -> bytes:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return data
    text = json.dumps(mutate_document(rng, doc), allow_nan=True)
    return text.encode()


def yaml_value(rng: random.Random, data: bytes) -> bytes:
    try:
        node = yaml.compose(data, Loader=yaml.SafeLoader)
        size = expanded_size(node, 10_000) if node is not None else 0
        if size is None or size > 10_000:  # aliases that expand (or to themselves)
            return data
        doc = yaml.safe_load(data)
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError):
        return data
    mutated = mutate_document(rng, doc)
    try:
        return yaml.safe_dump(mutated, sort_keys=False).encode()
    except (yaml.YAMLError, ValueError, OverflowError):
        return data


def yaml_aliases(rng: random.Random, data: bytes) -> bytes:
    """An anchored list of aliases, nested some levels deep, put in place of a value:
    a small file that stands for a great many values (or an alias to itself)."""
    levels = rng.choice((2, 5, 12, 30))
    width = rng.choice((2, 10))
    lines = [f"_b0: &b0 [{', '.join(['x'] * width)}]"]
    lines += [f"_b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * width)}]" for i in range(1, levels)]
    text = data.decode("utf-8", "replace")
    key = rng.choice(("name", "kind", "value", "matrices", "limits", "layers", "m", "checks",
                      "peaks", "memory", "defaults", "source"))
    target = f"*b{levels - 1}" if rng.random() < 0.9 else "&self [*self]"
    replaced = text.replace(f"{key}:", f"{key}: {target}\n_{key}_was:", 1)
    return ("\n".join(lines) + "\n" + replaced).encode()


def csv_cell(rng: random.Random, data: bytes) -> bytes:
    """One cell of the table replaced by a hostile one (or a row grown or cut)."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8", "replace"), newline="")))
    if len(rows) < 2:
        return data
    i = rng.randrange(1, len(rows))
    row = rows[i]
    action = rng.random()
    if action < 0.7 and row:
        row[rng.randrange(len(row))] = rng.choice(HOSTILE_CELLS)
    elif action < 0.8:
        row.append(rng.choice(HOSTILE_CELLS))
    elif action < 0.9 and row:
        row.pop()
    else:
        rows.extend([row] * rng.choice((2, 50)))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def csv_header(rng: random.Random, data: bytes) -> bytes:
    """A column of the header renamed, dropped or doubled."""
    head, _, body = data.partition(b"\n")
    names = head.split(b",")
    i = rng.randrange(len(names))
    names[i] = rng.choice((b"", b" matrix", b"time_s", b"d", b"x" * 300, names[i] * 2))
    return b",".join(names) + b"\n" + body


#: mutations by the kind of file
FOR_KIND: dict[str, tuple[Mutation, ...]] = {
    "json": (json_value, json_value, json_value, *BYTE_MUTATIONS),
    "yaml": (yaml_value, yaml_value, yaml_value, yaml_aliases, *BYTE_MUTATIONS),
    "csv": (csv_cell, csv_cell, csv_cell, csv_header, *BYTE_MUTATIONS),
}


def mutate_file(rng: random.Random, data: bytes, kind: str) -> bytes:
    """``data`` after one to three mutations of ``kind`` (json, yaml or csv)."""
    for _ in range(rng.randint(1, 3)):
        data = rng.choice(FOR_KIND[kind])(rng, data)
    return data
