"""Cost of opening a result store, against its size.

``make COUNT`` writes a store of COUNT matrices (each with the rows of one real analysis
of a small generated matrix under the default options) to bench/out/store_COUNT.db;
``open PATH [--readonly] [--cold]`` opens it once and closes it, as ``batch`` and
``report`` do before their work (``--cold``: its pages dropped from the page cache first,
as after a reboot; ``--no-open``: everything but the open, the yardstick). Time the
second with a whole-process timer, e.g.

    python bench/bench_store.py make 10000
    /usr/bin/time -v python bench/bench_store.py open bench/out/store_10000.db --cold
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from common import OUT


def make(count: int) -> Path:
    from sparsroof.analysis import Config
    from sparsroof.batch.plan import analyse_task, make_plan
    from sparsroof.batch.store import Store
    from sparsroof.hardware.library import load_spec
    from sparsroof.matrix.collection import discover
    from sparsroof.matrix.generate import stencil_2d, write

    OUT.mkdir(exist_ok=True)
    folder = OUT / "store_matrix"
    folder.mkdir(exist_ok=True)
    write(stencil_2d(20), folder / "lap2d_20.mtx")
    plan = make_plan(discover([folder]), [load_spec("a100")], Config(), None)
    result = analyse_task(plan.tasks[0])
    path = OUT / f"store_{count}.db"
    for p in OUT.glob(path.name + "*"):
        p.unlink()
    with Store(path) as store:
        run = store.begin_run(["bench_store.py", "make", str(count)])
        for i in range(count):
            key = dataclasses.replace(result.key, path=f"/data/m{i:06d}.mtx")
            store.save(dataclasses.replace(result, key=key), run)
    return path


def evict(path: Path) -> None:
    """Drop the store's pages from the page cache, as after a reboot (this file only)."""
    import os

    for p in path.parent.glob(path.name + "*"):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def main() -> None:
    if sys.argv[1:2] == ["make"]:
        path = make(int(sys.argv[2]) if len(sys.argv) > 2 else 10_000)
        print(f"{path}: {path.stat().st_size / 2**20:.1f} MiB")
    elif sys.argv[1:2] == ["open"]:
        from sparsroof.batch.store import Store

        if "--cold" in sys.argv:
            evict(Path(sys.argv[2]))
        if "--no-open" not in sys.argv:
            Store(sys.argv[2], readonly="--readonly" in sys.argv).close()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
