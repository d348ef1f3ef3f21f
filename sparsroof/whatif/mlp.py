"""A dense MLP layer trained data-parallel on P ranks: the case study of *Ridgeline: A 2D
Roofline Model for Distributed Systems* (Checconi, Tithi and Petrini), §III.

A fully connected layer with K input and M output features is trained on a global batch
of B samples split evenly over P ranks (strong scaling), b = ceil(B / P) on the busiest
rank. Each rank runs the three GEMMs of one training step on its mini-batch, and then the
ranks all-reduce the weight and bias gradients:

    F(r)   = 3 · 2·b·K·M            forward, activation gradient, weight gradient (§III)
    B_M(r) = s_v · (2·K·M + 2·b·K + 2·b·M)
             each tensor of the step moved once (W read, dW written, I and dO read,
             O and dI written), the Roofline's perfect-cache assumption
    B_N(r) = 2·(P−1)/P · s_v · (K·M + M)
             a ring all-reduce (reduce-scatter then all-gather) of the weights and biases

The paper names "some type of all-reduce" without a formula; 2·(P−1)/P of the buffer is
what each rank must send (and receive) in any all-reduce that moves whole values, the
ring reaches it, so the network term stays a lower bound. The reduction's own memory
traffic is left out for the same reason. t = max(F/P_u, B_M/β_M, B_N/β_N) per rank.

On a spec (:func:`mlp_study`) the GEMMs run on the spec's fastest dense unit at the value
precision (tensor cores where it has them, else its vector units), memory at the
bandwidth of the fastest level that holds a rank's working set (its step moves each
tensor once, so the working set is the memory bytes; main memory for the paper's
layers), the all-reduce at the spec's network bandwidth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..analysis.config import MAX_RANKS, whole_numbers
from ..errors import OptionError
from ..hardware.spec import HwSpec
from ..model.bound import memory_level, resolve_unit, sol_seconds
from ..model.ridgeline import RankBound
from ..model.traffic import VALUE_BYTES

__all__ = ["MlpLayer", "allreduce_bytes", "mlp_rank_bound", "parse_mlp", "mlp_study"]


@dataclass(frozen=True)
class MlpLayer:
    """A fully connected layer: K input features, M output features, global batch B."""

    inputs: int
    outputs: int
    batch: int

    def per_rank(self, ranks: int) -> int:
        """Samples on the busiest rank: ceil(B / P)."""
        return -(-self.batch // ranks)

    def flops(self, b: int) -> float:
        """Three GEMMs of 2·b·K·M FLOPs each (forward and both gradients)."""
        return 3 * 2.0 * b * self.inputs * self.outputs

    def memory_bytes(self, b: int, s_v: int) -> float:
        """Every tensor of the training step moved once: 2·K·M + 2·b·K + 2·b·M values."""
        k, m = self.inputs, self.outputs
        return float(s_v * (2 * k * m + 2 * b * k + 2 * b * m))

    def gradient_bytes(self, s_v: int) -> float:
        """The buffer the ranks all-reduce: weight and bias gradients, (K·M + M)·s_v."""
        return float(s_v * (self.inputs * self.outputs + self.outputs))


def allreduce_bytes(buffer: float, ranks: int) -> float:
    """Bytes each rank sends in a ring all-reduce of ``buffer`` bytes: 2·(P−1)/P·buffer
    (P−1 steps of reduce-scatter, P−1 of all-gather, each moving 1/P of the buffer).

    >>> allreduce_bytes(64e6, 1), allreduce_bytes(64e6, 2), allreduce_bytes(64e6, 4)
    (0.0, 64000000.0, 96000000.0)
    """
    return 2.0 * (ranks - 1) / ranks * buffer


def mlp_rank_bound(layer: MlpLayer, ranks: int, *, s_v: int, peak_flops: float,
                   bandwidth: float, network: float) -> RankBound:
    """SoL of one data-parallel training step of ``layer`` on ``ranks`` ranks.

    The busiest rank sets the time; totals over ranks give the plane's coordinates.

    >>> clx = {"peak_flops": 4.2e12, "bandwidth": 105e9, "network": 12e9}
    >>> rb = mlp_rank_bound(MlpLayer(4096, 4096, 1024 * 16), 16, s_v=4, **clx)
    >>> rb.bound, round(rb.arithmetic_intensity * rb.memory_intensity)  # F / B_N
    ('compute', 819)

    (F / B_N = 6·1024·K·M / (2·15/16 · 4·(K·M + M)) = 819 FLOP per network byte, above
    the compute/network border P_u/β_N = 350.)
    """
    if not 1 <= ranks <= layer.batch:
        raise OptionError(f"{{opt:ranks}}: {ranks} ranks for a batch of {layer.batch}: every "
                          "rank needs at least one sample")
    b = layer.per_rank(ranks)
    flops = layer.flops(b)
    mem = layer.memory_bytes(b, s_v)
    net = allreduce_bytes(layer.gradient_bytes(s_v), ranks)
    compute_s, memory_s, network_s = flops / peak_flops, mem / bandwidth, net / network
    sol, name = sol_seconds(compute_s, memory_s, network_s)
    # totals over ranks: every rank holds the weights, the samples are split
    k, m = layer.inputs, layer.outputs
    total_mem = float(s_v * (2 * ranks * k * m + 2 * layer.batch * (k + m)))
    return RankBound(
        ranks=ranks, width=b, flops=layer.flops(layer.batch), bytes_memory=total_mem,
        bytes_network=net * ranks, compute_s=compute_s, memory_s=memory_s,
        network_s=network_s, sol_s=sol, bound="network" if name == "launch" else name,
        slowest_rank=0, imbalance=b * ranks / layer.batch,
        peak_flops=peak_flops, bandwidth=bandwidth, network=network)


def parse_mlp(text: str) -> MlpLayer:
    """``K,M,B``: input features, output features, global batch.

    >>> parse_mlp("4096,4096,16384")
    MlpLayer(inputs=4096, outputs=4096, batch=16384)
    """
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 3 or min(values) < 1:
        raise OptionError(f"--mlp {text!r}: expected IN,OUT,BATCH as three positive whole "
                          "numbers, e.g. 4096,4096,16384")
    return MlpLayer(*values)


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
    if not all(1 <= p <= MAX_RANKS for p in counts):
        raise OptionError(f"{{opt:ranks}}: rank counts must be whole numbers from 1 to "
                          f"{MAX_RANKS:,}")
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
