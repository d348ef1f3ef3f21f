"""The classifier scored on real matrices it was not made from.

Every file of the corpus (``tests/corpus``) is scored against the class its ``SOURCES.md`` believes
it has; the test prints a confusion table (``pytest -s`` shows it). SOURCES.md names an
application or a trait, not one of our class names, so :data:`EXPECT` turns its words into
the name a right verdict carries, in order (the first rule that matches decides):

* the traits it names where we detect them: an arrowhead or dense rows -> ``dense-rows``,
  skewed rows -> ``skewed``, a RadiX-Net layer with the same count in every row and
  column -> ``regular``;
* banded / stencil / diagonal offsets -> ``banded``; block-structured -> ``block``;
  graphs and power networks -> ``graph``; uniform random and random pruning ->
  ``random``; the other pruned DNN layers -> ``unstructured-pruned``;
* the other applications (LP, combinatorial, optimization, chemical process, input
  activations), none of our classes -> ``mixed``.

Strict scoring: a verdict is right when its class is the expected name, or the expected
name is among its traits (a band of dense blocks is right for ``block`` when it reports
the blocks). Malformed files must be rejected by the loader; format cases and edge cases
have no structure class and are not scored, but must not claim a confidence above 0.5.

Beyond the corpus, the real graphs networkx ships (where it is installed) are scored too.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from sparsroof.errors import SparsroofError
from sparsroof.matrix.mtx import Matrix, load
from sparsroof.structure.classify import Verdict, classify
from sparsroof.structure.features import measure

from ..conftest import NOT_CARRIED, SHARED_CORPUS

#: (words in the believed class, expected class or trait), first match wins
EXPECT = (
    ("malformed", "rejected"),
    ("edge case", "unscored"), ("format case", "unscored"),
    ("arrowhead", "dense-rows"), ("dense rows", "dense-rows"), ("skewed rows", "skewed"),
    ("structured sparse (radix-net)", "regular"),
    ("banded", "banded"), ("stencil", "banded"), ("diagonal", "banded"),
    ("block-structured", "block"),
    ("graph", "graph"), ("power network", "graph"),
    ("uniform random", "random"), ("random pruning", "random"),
    ("dnn pruning", "unstructured-pruned"),
    ("circuit", "mixed"), ("lp constraint", "mixed"), ("combinatorial", "mixed"),
    ("optimization", "mixed"), ("chemical process", "mixed"), ("input activations", "mixed"),
)
#: strict agreement the classifier must reach on the scored corpus files
THRESHOLD = 0.9


def expected(believed: str) -> str:
    """The name a right verdict carries for a SOURCES.md class."""
    text = believed.lower()
    for words, name in EXPECT:
        if words in text:
            return name
    raise AssertionError(f"no rule for the believed class {believed!r}")


def believed_classes(sources: Path) -> dict[str, str]:
    """File name -> believed structure class, from the table of SOURCES.md."""
    header: list[str] | None = None
    out: dict[str, str] = {}
    for line in sources.read_text().splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(cells[0]) <= {"-", ":", " "}:
            continue
        out[re.sub(r"^`|`$", "", cells[0])] = cells[header.index("believed structure class")]
    return out


def right(verdict: Verdict, want: str) -> bool:
    return verdict.label == want or want in verdict.traits


def _confusion_table(pairs: list[tuple[str, str]]) -> str:
    counts = Counter(pairs)
    wants = sorted({w for w, _ in pairs})
    gots = sorted({g for _, g in pairs})
    first = max(len(x) for x in [*wants, "expected \\ verdict"]) + 1
    lines = ["expected \\ verdict".ljust(first) + "".join(f" {g}" for g in gots)]
    for w in wants:
        lines.append(w.ljust(first) + "".join(str(counts[(w, g)] or ".").rjust(len(g) + 1)
                                              for g in gots))
    return "\n".join(lines)


def score(matrices: list[tuple[str, Matrix, str]]) -> tuple[float, list[str], str]:
    """(strict accuracy, misses, confusion table) of (name, matrix, expected name)."""
    pairs, misses = [], []
    for name, m, want in matrices:
        v = classify(measure(m))
        ok = right(v, want)
        pairs.append((want, want if ok else v.label))
        if not ok:
            misses.append(f"{name}: expected {want}, got {v.label} {list(v.traits)} "
                          f"({v.confidence:.2f}): {v.reason}")
    accuracy = 1 - len(misses) / len(matrices)
    return accuracy, misses, _confusion_table(pairs)


def test_sources_table_is_parsed(corpus: Path) -> None:
    classes = believed_classes(corpus / "SOURCES.md")
    on_disk = {p.name for p in corpus.iterdir() if p.name not in ("SOURCES.md", "README.md")}
    assert set(classes) == on_disk | NOT_CARRIED and not on_disk & NOT_CARRIED
    assert classes["karate.mtx"] == "scale-free / social graph (small)"
    assert expected(classes["lund_a.mtx"]) == "block"
    assert expected(classes["arrow.mtx"]) == "dense-rows"


def test_corpus_agrees_with_its_believed_classes(corpus: Path) -> None:
    scored: list[tuple[str, Matrix, str]] = []
    for name, believed in sorted(believed_classes(corpus / "SOURCES.md").items()):
        want = expected(believed)
        path = corpus / name if name not in NOT_CARRIED else SHARED_CORPUS / name
        if not path.is_file():
            continue  # not carried, and no development corpus beside the checkout
        if want == "rejected":
            with pytest.raises(SparsroofError):
                load(path)
            continue
        try:
            m = load(path)
        except SparsroofError:
            assert want == "unscored", f"{name} ({believed}) was rejected by the loader"
            continue
        if want == "unscored":
            assert classify(measure(m)).confidence <= 0.5, f"{name}: too small to be sure"
            continue
        scored.append((name, m, want))
    accuracy, misses, table = score(scored)
    print(f"\ncorpus: {len(scored) - len(misses)} of {len(scored)} right "
          f"({accuracy:.1%} strict)\n{table}\n" + "\n".join(misses))
    assert len(scored) >= 35
    assert accuracy >= THRESHOLD, "\n".join(misses)


def _networkx_graphs() -> list[tuple[str, Matrix, str]]:
    nx = pytest.importorskip("networkx")
    graphs = {
        # Knuth, The Stanford GraphBase: co-appearance of characters in Les Miserables
        "les_miserables": nx.les_miserables_graph(),
        # Padgett & Ansell (1993): marriages between Renaissance Florentine families
        "florentine_families": nx.florentine_families_graph(),
        # Zachary (1977), the karate club, as networkx ships it (weights dropped)
        "karate_club": nx.karate_club_graph(),
    }
    out = []
    for name, g in graphs.items():
        a = nx.to_scipy_sparse_array(g, weight=None, format="coo")
        out.append((name, Matrix.from_scipy(a, name=name, pattern=True), "graph"))
    return out


def test_real_graphs_shipped_with_networkx_are_graphs_with_honest_confidence() -> None:
    graphs = _networkx_graphs()
    accuracy, misses, _ = score(graphs)
    assert accuracy == 1.0, "\n".join(misses)
    for name, m, _ in graphs:
        v = classify(measure(m))
        assert v.reason.startswith(v.label + ":")
        if m.stored_entries < 200:  # the Florentine families: 15 vertices, 40 entries
            assert v.confidence <= 0.5 and "too small" in v.reason, name
