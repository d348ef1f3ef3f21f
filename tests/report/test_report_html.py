"""``sparsroof report --html``: one self-contained page from a store or a JSON document.

The page is checked in two ways: its data and markup from Python, and its behaviour in a
real headless Chromium (``tests/headless.py``: the page loads without a console error,
the table holds every row, sorting and filtering work, every row has its point on the
roofline, a hostile matrix name stays text). The browser tests skip where no Chromium is
installed (``apt-get install chromium``; ``SPARSROOF_CHROMIUM`` names another binary).
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from sparsroof.report.html import page_data, page_html, script_json
from sparsroof.report.html_data import page_of_document, read_page

from ..conftest import DATA, ROOT, sparsroof
from ..headless import Chromium, Page, find_chromium

#: a matrix name (a file name: no slash) that runs script if put into the page as markup
EVIL = "<img src=x onerror=window.__pwned=1>"
#: a name that would close a script element; only a JSON document can hold one
EVIL_SCRIPT = "</script><img src=x onerror=window.__pwned=2>"


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return sparsroof(*args, cwd=cwd)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of three matrices (one named to inject markup) on two specs, reordered by
    RCM, with one file that fails to read; a fourth matrix's file is removed after the
    batch, so its thumbnail cannot be drawn."""
    root = tmp_path_factory.mktemp("html")
    tree = root / "data"
    tree.mkdir()
    for name in ("lap2d_64.mtx", "random_1000.mtx"):
        shutil.copy(DATA / name, tree / name)
    shutil.copy(DATA / "lap2d_64.mtx", tree / f"{EVIL}.mtx")
    shutil.copy(DATA / "random_1000.mtx", tree / "gone.mtx")
    (tree / "broken.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                     "3 3 5\n1 1 1\n")
    store = root / "sweep.db"
    done = cli("batch", str(tree), "--hw", "a100", "--hw", "v100-sxm2", "--reorder", "rcm",
               "--store", str(store), "-j", "1")
    assert done.returncode == 1, done.stderr  # the broken file failed
    (tree / "gone.mtx").unlink()
    return store


def store_rows(store: Path) -> int:
    with sqlite3.connect(store) as con:
        return int(con.execute("SELECT COUNT(*) FROM results").fetchone()[0])


@pytest.fixture(scope="module")
def store_page(sweep: Path) -> Path:
    out = sweep.parent / "report.html"
    done = cli("report", str(sweep), "--html", str(out))
    assert done.returncode == 1  # the store records a failure, as the table says
    assert f"wrote {out}" in done.stderr
    return out


# -- without a browser ------------------------------------------------------------------

def test_script_json_cannot_close_its_element() -> None:
    text = script_json({"name": EVIL_SCRIPT, "line": "a\u2028b", "nan": float("nan")})
    assert "<" not in text and ">" not in text and "\u2028" not in text
    assert json.loads(text) == {"name": EVIL_SCRIPT, "line": "a\u2028b", "nan": None}


def test_page_of_a_store_holds_every_row_failure_and_gain(sweep: Path) -> None:
    page = read_page(sweep)
    assert len(page.rows) == store_rows(sweep)
    assert {m.name for m in page.matrices.values()} == {"lap2d_64", "random_1000", EVIL,
                                                        "gone"}
    assert [f["kind"] for f in page.failures] == ["error"]
    assert "truncated" in page.failures[0]["reason"]
    # one gain per matrix, spec and (width, format) of the cache-aware model
    assert len(page.gains) == 4 * 2
    assert all(g["ordering"] == "rcm" and g["original_sol_s"] for g in page.gains)


def test_roofs_add_the_levels_no_row_reached_from_the_bundled_spec(sweep: Path) -> None:
    data = page_data(read_page(sweep))
    a100 = next(r for r in data["roofs"] if r["spec"] == "a100-80gb")
    # the small matrices all fit L2: HBM comes from the spec, marked as main memory
    assert [(lv["name"], lv["cache"], lv["from_spec"]) for lv in a100["levels"]] == [
        ("L2", True, False), ("HBM2e", False, True)]
    assert [p["label"] for p in a100["peaks"]] == ["simt fp64 9.7 TFLOP/s"]


def test_a_class_looks_the_same_on_the_page_and_in_the_figures(sweep: Path) -> None:
    """The page colours each class as the aggregate figure does, and a class keeps its
    colour and fill whatever other classes a store holds."""
    from sparsroof.batch.store import Store
    from sparsroof.batch.summary import store_points
    from sparsroof.plot.aggregate import _Style
    from sparsroof.report.colours import class_styles

    data = page_data(read_page(sweep))
    styles = {label: tuple(s) for label, s in data["class_styles"].items()}
    with Store(str(sweep)) as store:
        figure = _Style(store_points(store))
    assert styles and {k: v[1:] for k, v in styles.items()} == figure.fill
    assert {k: v[0] for k, v in styles.items()} == figure.color
    alone = {label: class_styles([label])[label] for label in styles}
    assert alone == styles


def test_the_page_is_self_contained(store_page: Path) -> None:
    text = store_page.read_text()
    assert "default-src 'none'" in text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "@import" not in text and "url(" not in text
    # the hostile name is only ever inside the escaped JSON
    assert EVIL not in text and "onerror=window" in text


def test_thumbnails_are_png_data_uris_and_a_gone_file_gets_a_note(sweep: Path) -> None:
    from sparsroof.plot.thumbnail import add_pictures

    page = read_page(sweep)
    add_pictures(page)
    keys = {m.name: m.key for m in page.matrices.values()}
    assert page.thumbnails[keys["lap2d_64"]].startswith("data:image/png;base64,")
    assert page.spy_notes[keys["gone"]] == "file not found"
    assert any("could not be read" in n for n in page.notes)


def analyze_doc(tmp_path: Path) -> dict[str, Any]:
    done = cli("analyze", str(DATA / "lap2d_64.mtx"), "--hw", "a100", "-O", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    doc["matrices"][0]["matrix"]["name"] = EVIL_SCRIPT
    return doc


def test_a_json_document_needs_html_and_gives_a_page(tmp_path: Path) -> None:
    doc = tmp_path / "analysis.json"
    doc.write_text(json.dumps(analyze_doc(tmp_path)))
    refused = cli("report", str(doc))
    assert refused.returncode == 2 and "--html" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    done = cli("report", str(doc), "--html", str(tmp_path / "a.html"))
    assert done.returncode == 0, done.stderr
    assert EVIL_SCRIPT not in (tmp_path / "a.html").read_text()


def test_a_document_of_another_kind_is_one_line(tmp_path: Path) -> None:
    doc = tmp_path / "other.json"
    doc.write_text('{"kind": "whatif", "layers": []}')
    done = cli("report", str(doc), "--html", str(tmp_path / "x.html"))
    assert done.returncode == 1
    assert done.stderr.strip().endswith("(its kind is 'whatif')")
    with pytest.raises(Exception, match="missing field 'runs'"):
        page_of_document({"kind": "compare"}, "c.json")


# -- in a browser ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Any:
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium installed (apt-get install chromium, or set "
                    "SPARSROOF_CHROMIUM): the page's behaviour is not checked")
    with Chromium(binary, tmp_path_factory.mktemp("profile")) as browser:
        try:
            browser.send("Browser.getVersion")
        except (OSError, RuntimeError, TimeoutError) as err:
            # the machine, not the page: a browser that cannot start here checks nothing
            pytest.skip(f"{binary} did not start headless: {err}")
        yield browser


def opened(chromium: Chromium, path: Path) -> Page:
    page = chromium.open(path.resolve().as_uri(), 1280, 900)
    assert page.problems == []
    return page


def column(page: Page, key: str) -> list[str]:
    """The text of one column in the table's order, shown rows only."""
    return page.evaluate(f"""(() => {{
        const i = Array.from(document.querySelectorAll('#results thead th'))
            .findIndex(th => th.dataset.key === {json.dumps(key)});
        return Array.from(document.querySelectorAll('#results tbody tr'))
            .filter(tr => !tr.hidden).map(tr => tr.children[i].textContent);
    }})()""")


def test_the_page_loads_with_every_row_and_one_point_per_row(chromium: Chromium,
                                                             store_page: Path,
                                                             sweep: Path) -> None:
    page = opened(chromium, store_page)
    n = store_rows(sweep)
    assert page.evaluate("document.querySelectorAll('#results tbody tr').length") == n
    assert page.evaluate("document.getElementById('count').textContent") == f"{n} of {n} rows"
    per_chart = page.evaluate("""Array.from(document.querySelectorAll('#roofline-charts .chart'))
        .map(c => [c.dataset.spec, c.querySelectorAll('circle.pt').length])""")
    with sqlite3.connect(sweep) as con:
        expected = dict(con.execute("SELECT spec, COUNT(*) FROM results GROUP BY spec"))
    assert dict(per_chart) == expected
    roofs = page.evaluate("""Array.from(document.querySelectorAll('[data-roof]'))
        .map(l => l.dataset.roof)""")
    assert {"compute", "memory", "launch"} <= set(roofs)
    assert page.evaluate("window.__pwned") is None
    assert EVIL in column(page, "matrix")
    assert page.evaluate("document.querySelectorAll('#spy img').length") == 3
    assert page.evaluate("document.querySelector('#spy .nospy').textContent") == \
        "file not found"
    assert page.evaluate("document.querySelectorAll('#failures tbody tr').length") == 1
    assert page.evaluate("document.querySelectorAll('#gains tbody tr').length") == 8


def test_sorting_a_column_both_ways(chromium: Chromium, store_page: Path) -> None:
    page = opened(chromium, store_page)
    click = "document.querySelector('#results th[data-key=\"nnz\"]').click()"
    page.evaluate(click)
    nnz = [int(v.replace(",", "")) for v in column(page, "nnz")]
    assert nnz == sorted(nnz) and nnz[0] < nnz[-1]
    page.evaluate(click)
    assert [int(v.replace(",", "")) for v in column(page, "nnz")] == sorted(nnz, reverse=True)
    assert page.evaluate("document.querySelector('#results th[data-key=\"nnz\"]')"
                         ".getAttribute('aria-sort')") == "descending"
    by_name = "document.querySelector('#results th[data-key=\"matrix\"]').click()"
    page.evaluate(by_name)
    up = list(dict.fromkeys(column(page, "matrix")))
    page.evaluate(by_name)
    assert list(dict.fromkeys(column(page, "matrix"))) == up[::-1]
    plain = [n for n in up if n != EVIL]
    assert plain == ["gone", "lap2d_64", "random_1000"]
    assert page.problems == []


def test_filtering_by_words_and_by_spec(chromium: Chromium, store_page: Path,
                                        sweep: Path) -> None:
    page = opened(chromium, store_page)
    with sqlite3.connect(sweep) as con:
        randoms = con.execute("SELECT COUNT(*) FROM results r JOIN matrices m ON "
                              "m.id = r.matrix_id WHERE m.name = 'random_1000'").fetchone()[0]
        v100 = con.execute("SELECT COUNT(*) FROM results WHERE spec = 'v100-sxm2'"
                           ).fetchone()[0]
    total = store_rows(sweep)
    page.evaluate("""(() => { const f = document.getElementById('filter');
        f.value = 'RANDOM_1000 csr'; f.dispatchEvent(new Event('input')); })()""")
    assert set(column(page, "matrix")) == {"random_1000"}
    assert len(column(page, "matrix")) == randoms
    faded = "document.querySelectorAll('#roofline-charts circle.pt.dim').length"
    assert page.evaluate(faded) == total - randoms
    page.evaluate("document.getElementById('clear').click()")
    assert len(column(page, "matrix")) == total
    page.evaluate("""(() => { const s = document.getElementById('f-spec');
        s.value = 'v100-sxm2'; s.dispatchEvent(new Event('change')); })()""")
    assert set(column(page, "spec")) == {"v100-sxm2"} and len(column(page, "spec")) == v100
    assert page.problems == []


def test_hovering_a_point_names_its_row(chromium: Chromium, store_page: Path) -> None:
    page = opened(chromium, store_page)
    tip = page.evaluate("""(() => {
        const c = document.querySelector('#roofline-charts circle.pt');
        const r = c.getBoundingClientRect();
        c.dispatchEvent(new MouseEvent('mouseover', {clientX: r.x, clientY: r.y}));
        const tip = document.getElementById('tip');
        return [tip.hidden, tip.textContent, c.getAttribute('aria-label')];
    })()""")
    hidden, text, label = tip
    matrix, storage, model = label.split(", ")
    assert not hidden and matrix in text and storage in text and model in text


def test_a_compare_document_shows_measured_runs(chromium: Chromium, tmp_path: Path) -> None:
    runs = tmp_path / "runs.csv"
    runs.write_text("matrix,time_s,format,hw\n"
                    f"{DATA / 'lap2d_64.mtx'},4.1e-6,csr,a100\n"
                    f"{DATA / 'random_1000.mtx'},3.3e-6,csr,v100-sxm2\n")
    judged = cli("compare", str(runs), "-O", "json")
    assert judged.returncode == 0, judged.stderr
    doc = tmp_path / "compare.json"
    doc.write_text(judged.stdout)
    out = tmp_path / "compare.html"
    assert cli("report", str(doc), "--html", str(out)).returncode == 0
    page = opened(chromium, out)
    assert page.evaluate("document.querySelectorAll('#results tbody tr').length") == 2
    assert page.evaluate("document.querySelectorAll('circle.pt-measured').length") == 2
    # the runs' matrices were classified from their files
    assert sorted(column(page, "class")) == ["banded", "random"]
    assert [v.endswith("%") for v in column(page, "pct_sol")] == [True, True]
    assert "% of SoL" in page.evaluate("document.getElementById('distribution-title')"
                                       ".textContent")


def test_a_hostile_document_stays_text(chromium: Chromium, tmp_path: Path) -> None:
    doc = analyze_doc(tmp_path)
    doc["matrices"][0]["spec"] = EVIL
    doc["matrices"][0]["class"]["label"] = EVIL_SCRIPT
    out = tmp_path / "hostile.html"
    out.write_text(page_html(page_of_document(doc, str(tmp_path / "hostile.json"))))
    page = opened(chromium, out)
    assert page.evaluate("window.__pwned") is None
    assert set(column(page, "matrix")) == {EVIL_SCRIPT}
    assert page.evaluate("document.querySelectorAll('img').length") == 0


def test_a_screenshot_at_1280_by_900(chromium: Chromium, store_page: Path) -> None:
    page = opened(chromium, store_page)
    shot = page.screenshot(store_page.parent / "report.png")
    head = shot.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")) == \
        (1280, 900)


def test_the_harness_sees_console_errors(chromium: Chromium, tmp_path: Path) -> None:
    """The 'no console error' checks above are not vacuous."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><title>t</title><script>console.error('seen');"
                   "undefinedFunction();</script>")
    page = chromium.open(bad.as_uri())
    problems = page.problems
    assert any("seen" in p for p in problems) and any("undefinedFunction" in p
                                                     for p in problems)


def test_a_long_table_is_shown_a_page_at_a_time(chromium: Chromium, sweep: Path,
                                                tmp_path: Path) -> None:
    out = tmp_path / "paged.html"
    out.write_text(page_html(read_page(sweep), page_rows=10))
    page = opened(chromium, out)
    total = store_rows(sweep)
    shown = "Array.from(document.querySelectorAll('#results tbody tr')).map(tr => tr.dataset.row)"
    seen: list[str] = []
    for _ in range(-(-total // 10)):
        rows = page.evaluate(shown)
        assert 0 < len(rows) <= 10
        seen += rows
        page.evaluate("document.getElementById('next').click()")
    assert sorted(seen, key=int) == [str(i) for i in range(total)]
    assert page.evaluate("document.getElementById('next').disabled") is True
    # sorting sorts every row, not the page shown, and starts again at the first page
    page.evaluate("document.querySelector('#results th[data-key=\"nnz\"]').click()")
    nnz = [int(v.replace(",", "")) for v in column(page, "nnz")]
    assert nnz[0] == min(r["nnz"] for r in read_page(sweep).rows)
    assert page.evaluate("document.getElementById('page').textContent").startswith("rows 1–10 ")
    assert page.problems == []


def test_a_sweep_of_the_corpus_on_two_specs(chromium: Chromium, tmp_path: Path) -> None:
    """The real corpus (55 files, some malformed on purpose) on two specs: the page holds
    every stored row and failure, one point per row per spec, and stays small."""
    store = tmp_path / "corpus.db"
    done = cli("batch", str(ROOT / "tests" / "corpus"), "--hw", "a100,v100-sxm2",
               "--store", str(store), "-j", "1")
    assert done.returncode == 1, done.stderr  # the malformed files are recorded failures
    page_file = tmp_path / "corpus.html"
    cli("report", str(store), "--html", str(page_file))
    assert page_file.stat().st_size < 2_000_000
    with sqlite3.connect(store) as con:
        rows = con.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        failures = con.execute("SELECT COUNT(*) FROM failures").fetchone()[0]
        per_spec = dict(con.execute("SELECT spec, COUNT(*) FROM results GROUP BY spec"))
    page = opened(chromium, page_file)
    assert page.evaluate("document.getElementById('count').textContent") == \
        f"{rows} of {rows} rows"
    assert page.evaluate("document.querySelectorAll('#failures tbody tr').length") == failures
    assert failures >= 5 and set(per_spec) == {"a100-80gb", "v100-sxm2"}
    drawn = page.evaluate("""Array.from(document.querySelectorAll('#roofline-charts .chart'))
        .map(c => [c.dataset.spec, c.querySelectorAll('circle.pt').length])""")
    # a row of no work (an empty matrix) cannot sit on log axes: the figure says so
    assert all(0 <= per_spec[spec] - n <= 4 for spec, n in drawn)


def test_the_page_of_runs_repeats_compares_exit_code(tmp_path: Path) -> None:
    """The page of compare's JSON exits as compare did: 1 when a run beat its bound (a
    check that writes the page must not pass where compare failed), 0 otherwise."""
    from ..conftest import ROOT

    for time_s, code in (("1e-7", 1), ("2e-5", 0)):  # lap2d_64 on an A100: 1.3 us at least
        runs = tmp_path / f"runs{code}.csv"
        runs.write_text(f"matrix,time_s\n{ROOT / 'data' / 'lap2d_64.mtx'},{time_s}\n")
        judged = cli("compare", str(runs), "--hw", "a100", "-O", "json")
        assert judged.returncode == code
        doc = tmp_path / f"runs{code}.json"
        doc.write_text(judged.stdout)
        page = cli("report", str(doc), "--html", str(tmp_path / f"runs{code}.html"))
        assert page.returncode == code, page.stderr
