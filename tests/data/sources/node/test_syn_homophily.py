from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import NodeLevelDataModule
from graphbench.data.sources.node.syn_homophily import SynHomophily, edge_homophily
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.conftest import real_data_root
from tests.data.sources.node.one_graph import one_graph_datamodule
from tests.data.sources.node.planetoid_fixture import write_planetoid

TOLERANCE = 0.05


SOURCE_ARGS = ("homophily", "num_nodes", "num_classes", "edges_per_node", "feature_source", "generation_seed")


def make_dm(root: Path, tmp_path: Path, **overrides: Any) -> NodeLevelDataModule:
    source_args: dict[str, Any] = dict(homophily=0.5, num_nodes=600, num_classes=3, edges_per_node=2)
    source_args.update({key: value for key, value in overrides.items() if key in SOURCE_ARGS})
    dm_args = {key: value for key, value in overrides.items() if key not in SOURCE_ARGS}
    return one_graph_datamodule(SynHomophily(**source_args), "syn-homophily", "random", root, tmp_path, **dm_args)


def realised_homophily(dm: NodeLevelDataModule) -> float:
    """The measured edge homophily the source stored in the generated graph."""
    assert dm.graph is not None
    return float(dm.graph.realised_homophily)


def test_edge_homophily_by_hand() -> None:
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    assert edge_homophily(edge_index, torch.tensor([0, 0, 1])) == 0.5


@pytest.mark.parametrize("target", [0.0, 0.3, 0.7, 1.0])
def test_realised_homophily_lands_near_the_target(tmp_path: Path, target: float) -> None:
    write_planetoid(tmp_path)
    dm = make_dm(tmp_path, tmp_path, homophily=target)
    dm.setup()
    assert dm.graph is not None
    assert abs(realised_homophily(dm) - target) <= TOLERANCE
    assert realised_homophily(dm) == pytest.approx(edge_homophily(dm.graph.edge_index, dm.graph.y))
    assert dm.graph.edge_index.size(1) == 2 * 2 * (600 - 1) - 2  # 2 edges per arriving node, both directions


def test_features_come_from_source_nodes_of_the_same_class_and_generation_is_deterministic(tmp_path: Path) -> None:
    truth = write_planetoid(tmp_path)
    dm = make_dm(tmp_path, tmp_path, normalize_features=False)
    dm.setup()
    again = make_dm(tmp_path, tmp_path / "other")
    again.setup()
    assert dm.graph is not None and again.graph is not None
    assert torch.equal(dm.graph.edge_index, again.graph.edge_index) and torch.equal(dm.graph.x, again.graph.x)
    donor = dm.graph.x[:, 0].long() - 1  # fixture column 0 = source node id + 1
    assert (donor >= 0).all()
    assert torch.equal(torch.from_numpy(truth["labels"])[donor], dm.graph.y)
    assert dm.graph.train_mask.sum() == 360 and dm.info.num_outputs == 3


def test_homophily_out_of_range_and_missing_cora_are_clear_errors(tmp_path: Path) -> None:
    for bad in (-0.1, 1.5, "high"):
        with pytest.raises(ConfigError, match=r"^homophily=.* must be a number in \[0, 1\]$"):
            make_dm(tmp_path, tmp_path, homophily=bad)
    with pytest.raises(DataError) as err:
        make_dm(tmp_path / "nowhere", tmp_path).setup()
    assert "Planetoid/Cora/raw/ind.cora.x" in str(err.value) and "ind.cora.graph" in str(err.value)


@pytest.mark.real_data
def test_with_real_cora_features(tmp_path: Path) -> None:
    dm = make_dm(real_data_root(), tmp_path, homophily=0.2, num_nodes=1000, num_classes=5, normalize_features=True)
    dm.setup()
    assert abs(realised_homophily(dm) - 0.2) <= TOLERANCE
    assert dm.info.node_features.dim == 1433
    assert np.isclose(dm.graph.x.sum(1).numpy(), 1.0).all()  # row-normalized bag of words
