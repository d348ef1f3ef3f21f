"""What if a dense MLP layer is trained data-parallel on P ranks: the Ridgeline case
study (*Ridgeline: A 2D Roofline Model for Distributed Systems*, §III) on a spec.

The GEMMs run on the spec's fastest dense unit at the value precision (tensor cores where
it has them, else its vector units), memory at the bandwidth of the fastest level that
holds a rank's working set (its step moves each tensor once, so the working set is the
memory bytes; main memory for the paper's layers), the all-reduce at the spec's network
bandwidth. The model itself is :mod:`sparsroof.model.mlp`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..analysis.config import whole_numbers
from ..errors import OptionError
from ..hardware.spec import HwSpec
from ..model.bound import memory_level, resolve_unit
from ..model.mlp import MlpLayer, mlp_rank_bound
from ..model.ridgeline import RankBound
from ..model.traffic import VALUE_BYTES

__all__ = ["mlp_study"]


def mlp_study(layer: MlpLayer, spec: HwSpec, ranks: Sequence[int | str],
              dtype: str = "fp32") -> tuple[str, str, list[RankBound]]:
    """(unit, precision, one bound per rank count) of the layer's training step; rank
    counts may be given as option text ("1,2,4").

    >>> from sparsroof.hardware.library import load_spec
    >>> unit, prec, rows = mlp_study(MlpLayer(4096, 4096, 8192), load_spec("clx"), [1, 16])
    >>> unit, prec, [(r.ranks, r.width, r.bound) for r in rows]
    ('simt', 'fp32', [(1, 8192, 'compute'), (16, 512, 'compute')])
    """
    if spec.network is None:
        raise OptionError(f"{spec.name} has no network bandwidth: the all-reduce needs one")
    counts = whole_numbers(ranks, "--ranks")
    if not counts:
        raise OptionError("--mlp needs --ranks, e.g. --ranks 1,2,4,8")
    unit, precision = resolve_unit(spec, "tensor", dtype, None, False)
    s_v = VALUE_BYTES[dtype]
    rows = []
    for p in counts:
        # the fastest level holding the rank's working set: a cache-resident step must
        # not be charged at main memory's speed, or a real run could beat its bound
        level, _ = memory_level(spec, layer.memory_bytes(layer.per_rank(p), s_v))
        assert level.bandwidth is not None  # memory_level only returns levels with one
        rows.append(mlp_rank_bound(layer, p, s_v=s_v,
                                   peak_flops=spec.peak(unit, precision).value,
                                   bandwidth=level.bandwidth.value, network=spec.network.value))
    return unit, precision, rows
