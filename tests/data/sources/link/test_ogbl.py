"""OGB link property prediction sets (``ogbl-*``): the OGB layout read, the protocol's loaders, unsafe split files refused."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
import torch

from graphbench.build.data import datamodule_from_keys
from graphbench.data.datamodules import LinkLevelDataModule
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.samplers import FullBatch
from graphbench.data.sources.link.ogbl import OGBLinkProperty, read_ogbl
from graphbench.vocabulary.errors import DataError
from tests.data.sources.link.link_fixtures import write_ogbl_collab

COMMON: dict[str, Any] = dict(task_type="binary", higher_is_better=True, split="official")


def ogbl_dm(root: Path, tmp_path: Path, edge_features: tuple[str, ...] = (), **overrides: Any) -> LinkLevelDataModule:
    args = dict(
        name="ogbl-collab",
        data_dir=root,
        cache_dir=tmp_path / "cache",
        metric="hits@50",
        **COMMON,
    )
    args.update(overrides)
    source = OGBLinkProperty(ogb_name="ogbl-collab", edge_features=edge_features)
    return datamodule_from_keys(LinkLevelDataModule, source, args, sampler=FullBatch(batch_size=32))


def test_ogbl_reads_ogb_layout(tmp_path: Path) -> None:
    truth = write_ogbl_collab(tmp_path)
    graph = read_ogbl(RawRoot(tmp_path), "ogbl-collab")
    assert graph.num_nodes == 40 and graph.x.shape == (40, 8)
    assert torch.equal(graph.edge_index[:, :80], torch.from_numpy(truth["edges"]).t())
    assert torch.equal(graph.edge_index[:, 80:], torch.from_numpy(truth["edges"]).t().flip(0))  # add_inverse_edge
    assert graph.edge_attr.shape == (160, 2)
    assert torch.equal(graph.val_neg, torch.from_numpy(truth["valid_neg"]).t())
    assert torch.equal(graph.test_pos, torch.from_numpy(truth["test_pos"]).t())


def test_ogbl_loaders_follow_the_protocol(tmp_path: Path) -> None:
    truth = write_ogbl_collab(tmp_path)
    dm = ogbl_dm(tmp_path, tmp_path)
    dm.setup()
    info = dm.info
    assert (info.level, info.num_outputs, info.node_features.dim, info.edge_features) == ("link", 1, 8, None)
    train = list(dm.train_dataloader())
    assert [b.edge_label_index.size(1) for b in train] == [32, 32, 16]
    assert sorted(torch.cat([b.edge_label_id for b in train]).tolist()) == list(range(80))
    assert all(b.edge_label.eq(1).all() and b.edge_attr is None and b.edge_index.size(1) == 160 for b in train)
    (val,) = list(dm.val_dataloader())
    assert val.edge_label.tolist() == [1.0] * 10 + [0.0] * 60
    assert torch.equal(val.edge_label_index[:, 10:], torch.from_numpy(truth["valid_neg"]).t())
    collab = ogbl_dm(tmp_path, tmp_path, name="collab", edge_features=["weight", "year"], use_val_edges_as_input=True)
    collab.setup()
    assert collab.info.edge_features is not None and collab.info.edge_features.dim == 2
    (test,) = list(collab.test_dataloader())
    assert test.edge_index.size(1) == 160 + 20 and test.edge_attr.shape == (180, 2)
    (val,) = list(collab.val_dataloader())
    assert val.edge_index.size(1) == 160  # validation edges are input only when testing


def test_ogbl_split_file_with_foreign_objects_is_refused(tmp_path: Path) -> None:
    write_ogbl_collab(tmp_path)
    (tmp_path / "ogbl_collab" / "split" / "time" / "valid.pt").write_bytes(pickle.dumps({"edge": print}, protocol=2))
    with pytest.raises(DataError, match=r"valid.pt: not a valid OGB split file"):
        read_ogbl(RawRoot(tmp_path), "ogbl-collab")
    with pytest.raises(DataError) as err:
        read_ogbl(RawRoot(tmp_path / "nowhere"), "ogbl-collab")
    assert "ogbl_collab/raw/edge.csv.gz" in str(err.value) and "ogbl_collab/split/time/test.pt" in str(err.value)
