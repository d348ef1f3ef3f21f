"""The first CUDA device, through CuPy, imported only here and only when asked for."""

from __future__ import annotations

from typing import Any

from ...errors import GpuError
from .device import EXTRA_HINT, Device

__all__ = ["open_device", "gpu_available"]


def _cupy() -> Any:
    try:
        import cupy
    except ImportError:
        raise GpuError(f"the GPU backend needs CuPy: {EXTRA_HINT}") from None
    return cupy


def gpu_available() -> bool:
    """True when CuPy imports and sees a CUDA device.

    >>> isinstance(gpu_available(), bool)
    True
    """
    try:
        cupy = _cupy()
    except GpuError:
        return False
    try:
        return bool(cupy.cuda.runtime.getDeviceCount() > 0)
    except cupy.cuda.runtime.CUDARuntimeError:
        return False


def open_device() -> Device:
    """The first CUDA device, through CuPy. Without CuPy or a device: one
    :class:`GpuError` line saying what is missing."""
    cupy = _cupy()
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as err:
        raise GpuError(f"CuPy found no usable CUDA device ({err})") from None
    if count < 1:
        raise GpuError("CuPy found no CUDA device")
    from .cupy_device import CupyDevice

    return CupyDevice(cupy)
