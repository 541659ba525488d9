from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.sources.node.sbm_patterns import SBMPatterns, block_model, cluster_graph, pattern_graph
from graphbench.vocabulary.errors import ConfigError
from tests.data._datamodules import node_level

PATTERN = dict(kind="pattern", num_communities=5, p=0.5, q=0.35, num_patterns=2, graphs_per_pattern=[4, 2, 2])
CLUSTER = dict(kind="cluster", num_communities=6, p=0.55, q=0.25, num_graphs=[6, 2, 2])


def make_dm(tmp_path: Path, params: dict[str, Any], **overrides: Any) -> NodeLevelDataModule:
    return node_level(
        SBMPatterns(**{**params, **overrides}),
        tmp_path,
        tmp_path / "cache",
        name=params["kind"],
        task_type="multiclass",
        metric="weighted_accuracy",
        higher_is_better=True,
        batch_size=4,
        split="generated",
    )


def test_block_model_densities_match_p_and_q() -> None:
    communities = np.repeat(np.arange(2), 300)
    adj = block_model(communities, 0.5, 0.1, np.random.default_rng(0))
    assert (adj == adj.T).all() and not adj.diagonal().any()
    same = communities[:, None] == communities[None, :]
    np.fill_diagonal(same, False)
    assert adj[same].mean() == pytest.approx(0.5, abs=0.01)
    assert adj[communities[:, None] != communities[None, :]].mean() == pytest.approx(0.1, abs=0.01)


def test_pattern_graph_plants_the_pattern() -> None:
    rng = np.random.default_rng(1)
    pattern_adj = block_model(np.zeros(20, dtype=np.int64), 0.5, 0.5, rng)
    pattern_feat = rng.integers(3, size=20)
    edge_index, feat, label = pattern_graph(
        pattern_adj, pattern_feat, num_communities=5, size_min=5, size_max=35, p=0.5, q=0.35, q_pattern=0.5, vocab_size=3, rng=rng
    )
    members = np.flatnonzero(label == 1)
    assert len(members) == 20 and 25 + 20 <= len(label) <= 5 * 34 + 20
    inside = np.isin(edge_index[0], members) & np.isin(edge_index[1], members)
    assert inside.sum() == pattern_adj.sum()  # the pattern's own edges, relabelled
    assert sorted(feat[members, 0].tolist()) == sorted(pattern_feat.tolist())
    assert set(feat[:, 0].tolist()) <= {0, 1, 2}


def test_cluster_graph_labels_exactly_one_seed_per_community() -> None:
    _edge_index, feat, label = cluster_graph(
        num_communities=6, size_min=5, size_max=35, p=0.55, q=0.25, rng=np.random.default_rng(0)
    )
    seeds = np.flatnonzero(feat[:, 0])
    assert sorted(label[seeds].tolist()) == list(range(6))
    assert (feat[seeds, 0] == label[seeds] + 1).all()


@pytest.mark.parametrize("params", [PATTERN, CLUSTER], ids=["pattern", "cluster"])
def test_datamodule_is_deterministic_and_masks_every_node_of_its_split(tmp_path: Path, params: dict[str, Any]) -> None:
    dm = make_dm(tmp_path, params)
    dm.setup()
    same = make_dm(tmp_path / "other", params)
    same.setup()
    assert dm.dataset is not None and same.dataset is not None
    assert torch.equal(dm.dataset.collated.edge_index, same.dataset.collated.edge_index)
    other_seed = make_dm(tmp_path / "seed1", params, generation_seed=1)
    other_seed.setup()
    assert other_seed.dataset is not None and not torch.equal(dm.dataset.collated.x, other_seed.dataset.collated.x)
    sizes = {k: len(v) for k, v in dm.splits.items()}
    assert sizes == ({"train": 8, "val": 4, "test": 4} if params["kind"] == "pattern" else {"train": 6, "val": 2, "test": 2})
    seen = []
    for batch in dm.val_dataloader():
        assert batch.val_mask.all() and "train_mask" not in batch
        seen.append(batch.n_id)
    n_id = torch.cat(seen)
    assert n_id.unique().numel() == n_id.numel()
    info = dm.info
    assert info.level == "node" and info.num_outputs == (2 if params["kind"] == "pattern" else 6)
    assert info.node_features.cardinalities == ((3,) if params["kind"] == "pattern" else (7,))


def test_invalid_parameters_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="probability"):
        make_dm(tmp_path, {**PATTERN, "q": 1.5})
    with pytest.raises(ConfigError, match="valid: \\['pattern', 'cluster'\\]"):
        make_dm(tmp_path, {**PATTERN, "kind": "motif"})
