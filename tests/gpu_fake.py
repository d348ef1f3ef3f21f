"""A stand-in for a CUDA device: the same calls as :class:`sparsroof.host.gpu.device.Device`,
with simulated time, so the timing methods, the bench and the probe can be checked
without a GPU.

Time is simulated, not measured: every launch adds its set duration to the work queued
on the stream; ``elapsed`` (two events around some work) returns the queued time of that
work times the next of ``region_factors`` (so the regions differ by known amounts);
``synchronize`` moves the host clock past the queued work plus ``round_trip_s``. Products
compute with scipy; every call is written to ``log``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sparsroof.host.gpu.device import CaptureError, DeviceInfo, Kernel, Product
from sparsroof.host.gpu.sell import SELL_SLICE, sell_arrays


def _sell_product(csr: Any, x: np.ndarray) -> np.ndarray:
    """y = A x computed from the SELL arrays cuSPARSE would get, as its kernel reads them:
    slot by slot, skipping the padding (column -1)."""
    values, cols, offsets = sell_arrays(csr, SELL_SLICE)
    rows = csr.shape[0]
    y = np.zeros(-(-rows // SELL_SLICE) * SELL_SLICE, dtype=np.result_type(values, x))
    for s in range(offsets.size - 1):
        block = slice(s * SELL_SLICE, (s + 1) * SELL_SLICE)
        for start in range(offsets[s], offsets[s + 1], SELL_SLICE):
            c = cols[start:start + SELL_SLICE]
            y[block] += np.where(c >= 0, values[start:start + SELL_SLICE] * x[c], 0.0)
    return y[:rows]

Work = Callable[[], object]

H100_LIKE = DeviceInfo(
    name="Fake H100", memory_bytes=80 * 2**30, sms=132, l2_bytes=50 * 2**20,
    compute_capability="9.0", driver_version="13.0", runtime_version="13.0",
    clock_hz=1.98e9, memory_clock_hz=2.6e9, memory_bus_bits=5120, threads_per_sm=2048,
    library="fake 1.0")


class FakeDevice:
    def __init__(self, *, call_s: float = 10e-6, region_factors: tuple[float, ...] = (1.0,),
                 round_trip_s: float = 5e-6, graph_share: float = 0.5,
                 capture_error: str | None = None, wrong_result: bool = False,
                 rates: dict[str, float] | None = None, floor_s: float = 2e-6,
                 info: DeviceInfo = H100_LIKE) -> None:
        self.info = info
        self.call_s = call_s
        self.region_factors = region_factors
        self.round_trip_s = round_trip_s
        self.graph_share = graph_share  # a replayed launch costs this share of a launch
        self.capture_error = capture_error
        self.wrong_result = wrong_result
        # bytes/s of the probe's kernels; FLOP/s of the FMA kernel
        self.rates = {"copy": 3.0e12, "triad": 2.9e12, "l2": 9.0e12, "read": 3.0e12,
                      "fma64": 30e12,
                      "fma32": 60e12, **(rates or {})}
        self.floor_s = floor_s
        self.log: list[tuple[Any, ...]] = []
        self.now = 0.0
        self.queued = 0.0
        self.regions = 0
        self.capturing: list[float] | None = None

    # what a launch costs: queued on the stream, or recorded into a graph being captured
    def _launch(self, name: str, seconds: float) -> None:
        self.log.append(("launch", name))
        if self.capturing is not None:
            self.capturing.append(seconds)
        else:
            self.queued += seconds

    def clock(self) -> float:
        return self.now

    def synchronize(self) -> None:
        self.log.append(("sync",))
        self.now += self.queued + self.round_trip_s
        self.queued = 0.0

    def elapsed(self, work: Work) -> float:
        before = self.queued
        work()
        factor = self.region_factors[self.regions % len(self.region_factors)]
        self.regions += 1
        seconds = (self.queued - before) * factor
        self.log.append(("region", seconds))
        self.now += self.queued
        self.queued = 0.0
        return seconds

    def capture(self, work: Work) -> Work:
        if self.capture_error is not None:
            raise CaptureError(self.capture_error)
        self.capturing = []
        work()
        recorded, self.capturing = self.capturing, None
        self.log.append(("captured", len(recorded)))

        def replay() -> None:
            self.log.append(("replay", len(recorded)))
            self.queued += sum(recorded) * self.graph_share
        return replay

    def scrubber(self, nbytes: int) -> Work:
        return lambda: self._launch(f"scrub {nbytes}", nbytes / self.rates["copy"])

    def product(self, matrix: Any, storage: str, operand: Any) -> Product:
        out: dict[str, Any] = {}
        self.log.append(("product", storage))

        def call() -> None:
            out["y"] = _sell_product(matrix, operand) if storage == "sell" else matrix @ operand
            self._launch("product", self.call_s)

        def result() -> Any:
            y = np.array(out["y"], dtype=np.float64)
            if self.wrong_result:
                y.flat[0] += 1.0
            return y
        return Product(call, result, "scipy standing in for cuSPARSE")

    def _kernel(self, name: str, seconds: float, **size: float) -> Kernel:
        return Kernel(lambda: self._launch(name, seconds), **size)

    def copy_kernel(self, nbytes: int) -> Kernel:
        return self._kernel("copy", 2 * nbytes / self.rates["copy"], bytes_moved=2.0 * nbytes)

    def triad_kernel(self, nbytes: int) -> Kernel:
        return self._kernel("triad", 3 * nbytes / self.rates["triad"],
                            bytes_moved=3.0 * nbytes)

    def read_kernel(self, nbytes: int, passes: int) -> Kernel:
        # in the L2 up to its capacity, then falling to the memory rate
        rate = self.rates["l2"] if nbytes <= self.info.l2_bytes else self.rates["read"]
        moved = float(nbytes * passes)
        return self._kernel("read", moved / rate, bytes_moved=moved)

    def empty_kernel(self) -> Kernel:
        return self._kernel("empty", self.floor_s)

    def fma_kernel(self, precision: str) -> Kernel:
        flops = 1e10
        return self._kernel("fma", flops / self.rates["fma" + precision[2:]], flops=flops)

    def release(self) -> None:
        self.log.append(("release",))
