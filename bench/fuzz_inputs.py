"""Mutation fuzzing of every input file other than matrices, at length: the cases of
``tests/userfile/test_fuzz_inputs.py`` (measured runs as CSV, Ginkgo JSON and bench JSON, specs,
budgets, network manifests and layer times), many more of them.

Each case is a small valid file after one to three mutations, read by the public reader
and passed on to the code that uses it; it must end within the test's time limit in a
result or a one-line error naming the file. Prints, per kind of file, the cases run, how
many ended in a result and how many in an error, the seconds taken and the process's peak
memory; the first failing case stops the run and names its seed (the test file rebuilds
it with ``one_case``).

Usage: python bench/fuzz_inputs.py [CASES] [SURFACE,...]   (default 10000 of every kind)
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import ROOT

sys.path.insert(0, str(ROOT))
from tests.userfile.test_fuzz_inputs import MANIFEST, MATRIX, SURFACES, one_case  # noqa: E402


def main() -> None:
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else sorted(SURFACES)
    for surface in chosen:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            (folder / "m.mtx").write_bytes(MATRIX)
            (folder / "toy.yaml").write_bytes(MANIFEST)
            start = time.perf_counter()
            outcomes = Counter(one_case(folder, surface, seed) for seed in range(cases))
            took = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{surface:16s} {cases:7,d} cases: {outcomes['ok']:6,d} results, "
              f"{outcomes['error']:6,d} one-line errors, {took:6.1f} s, peak {peak:.0f} MB",
              flush=True)


if __name__ == "__main__":
    main()
