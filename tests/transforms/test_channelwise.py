"""Channel-wise standardization with training-split statistics (Tönshoff et al., 2023)."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch, Data, InMemoryDataset

from graphbench.transforms.channelwise import ChannelwiseNorm
from graphbench.vocabulary.errors import ConfigError


def graph(x: list[list[float]], e: list[list[float]] | None = None) -> Data:
    n = len(x)
    edge_index = torch.tensor([[i for i in range(n - 1)], [i + 1 for i in range(n - 1)]])
    data = Data(x=torch.tensor(x), edge_index=edge_index)
    if e is not None:
        data.edge_attr = torch.tensor(e)
    return data


# training rows of x: channel 0 = 1, 3, 5, 7 (mean 4, std sqrt(5)); channel 1 = 2 everywhere (constant)
TRAIN = [graph([[1.0, 2.0], [3.0, 2.0]], [[10.0]]), graph([[5.0, 2.0], [7.0, 2.0]], [[30.0]])]
TEST = graph([[4.0, 0.0], [9.0, 2.0]], [[20.0]])


def test_fit_exact_statistics_and_apply() -> None:
    norm = ChannelwiseNorm.fit(TRAIN)
    mean, std = norm.stats["x"]
    assert torch.allclose(mean, torch.tensor([4.0, 2.0]))
    assert torch.allclose(std, torch.tensor([5.0**0.5, 1.0]))  # population std; constant channel -> 1
    e_mean, e_std = norm.stats["edge_attr"]
    assert torch.allclose(e_mean, torch.tensor([20.0])) and torch.allclose(e_std, torch.tensor([10.0]))
    out = norm(TEST)
    assert torch.allclose(out.x, torch.tensor([[0.0, -2.0], [5 / 5**0.5, 0.0]]))
    assert torch.allclose(out.edge_attr, torch.tensor([[0.0]]))
    assert torch.equal(TEST.x, torch.tensor([[4.0, 0.0], [9.0, 2.0]])), "the input graph must not change"


def test_training_rows_are_standardized() -> None:
    norm = ChannelwiseNorm.fit(TRAIN)
    x = torch.cat([norm(g).x for g in TRAIN])
    assert torch.allclose(x[:, 0].mean(), torch.tensor(0.0), atol=1e-6)
    assert torch.allclose(x[:, 0].std(correction=0), torch.tensor(1.0))


def test_streaming_fit_matches_one_pass_over_many_graphs() -> None:
    torch.manual_seed(0)
    graphs = [Data(x=torch.randn(n, 3) * 5 + 100, edge_index=torch.zeros(2, 0, dtype=torch.long)) for n in range(1, 30)]
    norm = ChannelwiseNorm.fit(graphs)
    rows = torch.cat([g.x for g in graphs]).double()
    assert torch.allclose(norm.stats["x"][0].double(), rows.mean(0), atol=1e-5)
    assert torch.allclose(norm.stats["x"][1].double(), rows.std(0, correction=0), atol=1e-5)


def test_fit_from_tensors_and_from_collated_dataset_agree() -> None:
    data, slices = InMemoryDataset.collate([*TRAIN, TEST])
    from_graphs = ChannelwiseNorm.fit(TRAIN)
    from_collated = ChannelwiseNorm.fit_collated(data, slices, torch.tensor([0, 1]))
    rows = {"x": torch.cat([g.x for g in TRAIN]), "edge_attr": torch.cat([g.edge_attr for g in TRAIN])}
    from_tensors = ChannelwiseNorm.fit(rows)
    from_batch = ChannelwiseNorm.fit(Batch.from_data_list(TRAIN))
    assert from_graphs.cache_token == from_collated.cache_token == from_tensors.cache_token == from_batch.cache_token
    only_test = ChannelwiseNorm.fit_collated(data, slices, [2])
    assert torch.allclose(only_test.stats["x"][0], TEST.x.mean(0))


def test_collated_dataset_and_batches_normalize_like_single_graphs() -> None:
    norm = ChannelwiseNorm.fit(TRAIN)
    batch = Batch.from_data_list([*TRAIN, TEST])
    assert torch.allclose(norm(batch).x, torch.cat([norm(g).x for g in [*TRAIN, TEST]]))


def test_cache_token_repr_and_round_trip() -> None:
    norm = ChannelwiseNorm.fit(TRAIN)
    other = ChannelwiseNorm.fit(TRAIN[:1])
    assert norm.cache_token != other.cache_token
    assert norm.cache_token in repr(norm) and "x=2" in repr(norm)
    assert ChannelwiseNorm.from_dict(norm.to_dict()).cache_token == norm.cache_token


def test_missing_edge_features_are_skipped() -> None:
    norm = ChannelwiseNorm.fit([graph([[1.0], [3.0]])])
    assert set(norm.stats) == {"x"}
    assert torch.allclose(norm(graph([[2.0], [2.0]], [[7.0]])).edge_attr, torch.tensor([[7.0]]))


def test_categorical_features_are_refused() -> None:
    with pytest.raises(ConfigError, match="float features"):
        ChannelwiseNorm.fit([Data(x=torch.tensor([[1], [2]]))])
    with pytest.raises(ConfigError, match="none of"):
        ChannelwiseNorm.fit([Data(edge_index=torch.zeros(2, 0, dtype=torch.long), num_nodes=3)])


def test_channel_mismatch_is_an_error() -> None:
    norm = ChannelwiseNorm.fit(TRAIN)
    with pytest.raises(ValueError, match="channels"):
        norm(Data(x=torch.zeros(2, 5)))
