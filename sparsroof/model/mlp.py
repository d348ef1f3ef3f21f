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
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import OptionError
from .bound import sol_seconds
from .ridgeline import RankBound

__all__ = ["MlpLayer", "allreduce_bytes", "mlp_rank_bound", "parse_mlp"]


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
        raise OptionError(f"{ranks} ranks for a batch of {layer.batch}: every rank needs at "
                          "least one sample")
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
