"""GCNLayer's sparse propagation under CPU mixed precision (``trainer.precision=bf16-mixed``):
the CPU's sparse CSR product has no bfloat16 kernel, so the layer propagates in float32 there."""

from __future__ import annotations

import torch

from graphbench.modules.layers.gcn import GCNLayer


def test_sparse_gcn_under_cpu_bf16_autocast_matches_float32_within_bf16_rounding() -> None:
    torch.manual_seed(0)
    layer = GCNLayer(4, 3, edge_dim=0, sparse=True)
    x = torch.randn(5, 4)
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    expected, _ = layer(x, edge_index, None)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = layer(x, edge_index, None)
    assert out.dtype == torch.float32
    assert torch.allclose(out, expected, rtol=0.02, atol=0.02)
    out.sum().backward()
    assert layer.conv.lin.weight.grad is not None and bool(torch.isfinite(layer.conv.lin.weight.grad).all())
