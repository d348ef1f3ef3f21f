"""The small surface of a CUDA device that GPU measurements use, and how to get one.

Everything that times a kernel on the GPU (:mod:`.timing`, :mod:`.bench`, :mod:`.probe`)
talks to a :class:`Device`: a handful of calls (time a piece of work between two CUDA
events, capture work into a graph, wait for the stream, write a buffer, launch the probe's
kernels, run a cuSPARSE product). :mod:`.cupy_device` implements it with CuPy; a test
passes its own object with the same calls and so checks the timing logic without a GPU.

CuPy is an optional dependency (``pip install "sparsroof[gpu]"``), imported only when a
device is asked for (:func:`sparsroof.host.gpu.cuda.open_device`): without it, one
:class:`GpuError` line names the extra.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

__all__ = ["EXTRA_HINT", "DeviceInfo", "Product", "Kernel", "Device", "CaptureError"]

#: what to install for the GPU backend, as every message says it
EXTRA_HINT = 'pip install "sparsroof[gpu]"'

Work = Callable[[], object]


@dataclass(frozen=True)
class DeviceInfo:
    """What a result file records about the device (SI units; versions as text)."""

    name: str
    memory_bytes: int
    sms: int
    l2_bytes: int
    compute_capability: str          # "9.0"
    driver_version: str              # "13.0", the CUDA version the driver supports
    runtime_version: str             # "13.0", the CUDA runtime CuPy runs on
    clock_hz: float | None = None    # the SM clock the device reports as its maximum
    memory_clock_hz: float | None = None
    memory_bus_bits: int | None = None
    threads_per_sm: int | None = None
    library: str = ""                # "cupy 14.2.0"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Product:
    """A prepared sparse product on the device: ``call`` launches it (asynchronously, on
    the device's stream) and ``result`` copies the last output to the host."""

    call: Work
    result: Callable[[], Any]
    how: str  # which library entry point runs, for the result file


@dataclass(frozen=True)
class Kernel:
    """A probe kernel: ``launch`` starts one run of it; one run moves ``bytes_moved`` bytes
    or does ``flops`` floating-point operations."""

    launch: Work
    bytes_moved: float = 0.0
    flops: float = 0.0


class CaptureError(Exception):
    """Work that could not be captured into a CUDA graph (the reason is the message)."""


class Device(Protocol):
    """The calls GPU measurements make; see :class:`.cupy_device.CupyDevice`."""

    info: DeviceInfo

    def clock(self) -> float:
        """The host's clock, in seconds (for host-synchronised timing)."""

    def synchronize(self) -> None:
        """Wait until the stream's work is done."""

    def elapsed(self, work: Work) -> float:
        """Seconds between a CUDA event recorded before ``work()`` and one after it."""

    def capture(self, work: Work) -> Work:
        """``work`` captured into a CUDA graph; the returned call replays it once.
        Raises :class:`CaptureError` where the work cannot be captured."""

    def scrubber(self, nbytes: int) -> Work:
        """A call that writes a buffer of ``nbytes`` bytes (evicting the caches)."""

    def product(self, matrix: Any, storage: str, operand: Any) -> Product:
        """``matrix`` (scipy sparse, in ``storage``) times ``operand`` (numpy) through
        cuSPARSE, with both copied to the device once."""

    def copy_kernel(self, nbytes: int) -> Kernel:
        """A device-to-device copy of ``nbytes`` bytes (2 x nbytes moved)."""

    def triad_kernel(self, nbytes: int) -> Kernel:
        """a = b + s·c over fp64 arrays of ``nbytes`` bytes each (3 x nbytes moved)."""

    def read_kernel(self, nbytes: int, passes: int) -> Kernel:
        """``passes`` reads of an ``nbytes`` working set in one launch, past the L1."""

    def empty_kernel(self) -> Kernel:
        """A kernel that does nothing (one block)."""

    def fma_kernel(self, precision: str) -> Kernel:
        """Independent fused multiply-adds on every SM, in fp64 or fp32."""

    def release(self) -> None:
        """Free what earlier products and kernels left in the memory pool."""
