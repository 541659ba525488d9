"""PE encoders: shapes, padding masks, train-only per-graph sign flips, config wiring."""

from __future__ import annotations

import pytest
import torch
from hydra.utils import instantiate
from omegaconf import OmegaConf
from torch import nn
from torch_geometric.data import Batch, Data
from torch_geometric.utils import to_undirected

from graphbench.modules.pe_encoders import LapPEEncoder, RWSEEncoder, SumPEEncoder
from graphbench.transforms.lap_pe import LapPE
from graphbench.transforms.precompute import PECompose, precompute
from graphbench.transforms.rwse import RWSE
from tests.paths import CONF


def cycle(n: int) -> Data:
    ei = torch.stack([torch.arange(n), (torch.arange(n) + 1) % n])
    return Data(edge_index=to_undirected(ei, num_nodes=n), num_nodes=n)


def batch(k_lap: int = 4, k_rw: int = 6) -> Batch:
    graphs = [cycle(3), cycle(7), cycle(5)]  # C_3 has only 2 non-trivial eigenpairs: padded
    return Batch.from_data_list(precompute(graphs, PECompose([LapPE(k=k_lap), RWSE(k=k_rw)])))


@pytest.mark.parametrize("kind", ["linear", "deepset"])
def test_lappe_shapes_and_padding_is_masked(kind):
    data = batch()
    enc = LapPEEncoder(k=4, out_dim=16, kind=kind).eval()
    out = enc(data)
    assert out.shape == (15, 16) and torch.isfinite(out).all()
    # the padded columns of C_3 (eigval NaN) must not influence its nodes
    poked = data.clone()
    poked.lap_pe = data.lap_pe.clone()
    # deepset masks them by the NaN eigenvalue; NaN-padded vectors (GraphGPS style) read as 0
    poked.lap_pe[:3, 2:] = 123.0 if kind == "deepset" else float("nan")
    torch.testing.assert_close(enc(poked), out)


def test_unknown_kind_lists_valid_kinds():
    with pytest.raises(ValueError, match=r"'transformer'.*\['linear', 'deepset'\]"):
        LapPEEncoder(k=4, out_dim=8, kind="transformer")


def identity_encoder(k: int, sign_flip: bool = True) -> LapPEEncoder:
    enc = LapPEEncoder(k=k, out_dim=k, kind="linear", sign_flip=sign_flip)
    with torch.no_grad():
        enc.linear.weight.copy_(torch.eye(k))
        enc.linear.bias.zero_()
    return enc


def test_sign_flip_only_in_training_and_per_graph():
    data = batch()
    enc = identity_encoder(4)
    enc.eval()
    assert torch.equal(enc(data), data.lap_pe)  # evaluation: no flips
    enc.train()
    torch.manual_seed(0)
    seen = set()
    for _ in range(10):
        out = enc(data)
        for g in range(3):
            vecs, flipped = data.lap_pe[data.batch == g], out[data.batch == g]
            ref = vecs.abs().argmax(0, keepdim=True)  # a nonzero entry per column
            signs = torch.sign(flipped.gather(0, ref) * vecs.gather(0, ref))[0]
            signs = torch.where(signs == 0, torch.ones_like(signs), signs)  # padded columns
            # one sign per (graph, eigenvector): every node of the graph agrees
            assert torch.equal(flipped, vecs * signs)
            seen.add(tuple(signs.tolist()))
    assert len(seen) > 2  # signs change between calls and graphs
    no_flip = identity_encoder(4, sign_flip=False).train()
    assert torch.equal(no_flip(data), data.lap_pe)


def test_rwse_encoder_and_reset():
    data = batch()
    enc = RWSEEncoder(k=6, out_dim=8)
    out = enc.train()(data)
    assert out.shape == (15, 8)
    assert enc.norm.num_batches_tracked.item() == 1
    enc.reset_parameters()
    assert enc.norm.num_batches_tracked.item() == 0
    assert enc.eval()(data).shape == (15, 8)


def test_sum_encoder_adds_parts_and_checks_dims():
    data = batch()
    lap, rw = LapPEEncoder(k=4, out_dim=8).eval(), RWSEEncoder(k=6, out_dim=8).eval()
    total = SumPEEncoder([lap, rw]).eval()
    torch.testing.assert_close(total(data), lap(data) + rw(data))
    assert total.out_dim == 8
    total.reset_parameters()
    with pytest.raises(ValueError, match="out_dim"):
        SumPEEncoder([lap, RWSEEncoder(k=6, out_dim=4)])
    built = SumPEEncoder([lambda out_dim: RWSEEncoder(k=6, out_dim=out_dim)], out_dim=5)
    assert built.eval()(data).shape == (15, 5)


def test_missing_attribute_names_the_transform():
    plain = Batch.from_data_list([cycle(4)])
    with pytest.raises(ValueError, match=r"'rwse'.*RWSE"):
        RWSEEncoder(k=3, out_dim=4)(plain)
    with pytest.raises(ValueError, match=r"\[N, 4\]"):
        LapPEEncoder(k=4, out_dim=4)(Batch.from_data_list(precompute([cycle(4)], LapPE(k=3))))


@pytest.mark.parametrize("option", ["lappe", "rwse", "lappe+rwse"])
def test_pe_config_builds_transform_and_encoder(option):
    cfg = OmegaConf.create({"pe": OmegaConf.load(CONF / "pe" / f"{option}.yaml")})
    assert cfg.pe.name == option
    transform = instantiate(cfg.pe.transform)
    encoder = instantiate(cfg.pe.encoder)(out_dim=12)
    assert isinstance(encoder, nn.Module)
    data = Batch.from_data_list(precompute([cycle(4), cycle(12)], transform))
    assert encoder.eval()(data).shape == (16, 12)


def test_graphgps_deepset_lappe_with_concat_dim() -> None:
    """GraphGPS's LapPENodeEncoder (DeepSet, layers 2, dim_pe 16): Linear(2, 32) ReLU Linear(32, 16) ReLU, summed."""
    enc = LapPEEncoder(k=3, out_dim=100, kind="deepset", concat_dim=16, sign_flip=False).eval()
    assert enc.out_dim == 16 and isinstance(enc.rho, nn.Identity)
    assert [tuple(m.weight.shape) for m in enc.phi if isinstance(m, nn.Linear)] == [(32, 2), (16, 32)]
    assert sum(p.numel() for p in enc.parameters()) == 2 * 32 + 32 + 32 * 16 + 16
    batch = Data(lap_pe=torch.rand(4, 3), lap_eigval=torch.tensor([[0.0, 1.0, float("nan")]]).expand(4, 3))
    pairs = torch.stack([batch.lap_pe[:, :2], batch.lap_eigval[:, :2]], dim=-1)
    torch.testing.assert_close(enc(batch), enc.phi(pairs).sum(dim=1))
    rwse = RWSEEncoder(k=20, out_dim=100, concat_dim=28)
    assert rwse.out_dim == 28 and rwse.linear.weight.shape == (28, 20)
    with pytest.raises(ValueError, match="without concat_dim"):
        SumPEEncoder([rwse, LapPEEncoder(k=2, out_dim=28)])


def test_one_sign_per_eigenvector_for_the_whole_batch() -> None:
    """sign_flip_per="batch" (GraphGPS's LapPENodeEncoder): every node of every graph gets the same sign per column."""
    enc = LapPEEncoder(k=4, out_dim=4, kind="linear", sign_flip_per="batch").train()
    with torch.no_grad():
        enc.linear.weight.copy_(torch.eye(4))
        enc.linear.bias.zero_()
    batch = Batch.from_data_list([Data(lap_pe=torch.ones(3, 4), num_nodes=3), Data(lap_pe=torch.ones(2, 4), num_nodes=2)])
    for seed in range(4):
        torch.manual_seed(seed)
        out = enc(batch)
        assert (out == out[:1]).all() and set(out.abs().flatten().tolist()) == {1.0}
    with pytest.raises(ValueError, match="sign_flip_per"):
        LapPEEncoder(k=4, out_dim=4, sign_flip_per="node")
