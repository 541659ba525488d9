from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import LinkLevelDataModule
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.link import pcqm_contact
from graphbench.data.sources.link.ogbl import OGBLinkProperty, read_ogbl
from graphbench.data.sources.link.pcqm_contact import PCQMContact, shuffle_split
from graphbench.data.sources.link.tsp import TSP
from graphbench.run.errors import DataError
from tests.data.sources.link.link_fixtures import write_ogbl_collab, write_pcqm_contact, write_tsp

COMMON: dict[str, Any] = dict(task_type="binary", higher_is_better=True, split="official")


def ogbl_dm(root: Path, tmp_path: Path, edge_features: tuple[str, ...] = (), **overrides: Any) -> LinkLevelDataModule:
    args = dict(name="ogbl-collab", data_dir=root, cache_dir=tmp_path / "cache", batch_size=32, metric="hits@50", **COMMON)
    args.update(overrides)
    return LinkLevelDataModule(source=OGBLinkProperty(ogb_name="ogbl-collab", edge_features=edge_features), **args)


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


@pytest.fixture
def pcqm_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_pcqm_contact(tmp_path)
    # the fixture is not the official file, so skip the MD5 check of the real one
    monkeypatch.setattr(pcqm_contact, "PCQM_CONTACT_FILES", [RawFile(pcqm_contact.PCQM_CONTACT_FILES[0].relpath)])
    return tmp_path


def pcqm_dm(root: Path, tmp_path: Path) -> LinkLevelDataModule:
    return LinkLevelDataModule(
        source=PCQMContact(featurize_workers=1),
        name="pcqm-contact",
        data_dir=root,
        cache_dir=tmp_path / "cache",
        batch_size=4,
        metric="mrr_filtered",
        **COMMON,
    )


def test_pcqm_contact_reads_lrgb_layout(pcqm_root: Path, tmp_path: Path) -> None:
    dm = pcqm_dm(pcqm_root, tmp_path)
    dm.setup()
    assert dm.dataset is not None and len(dm.dataset) == 15  # 20 kept rows, 5 without contacts
    assert {k: len(v) for k, v in dm.splits.items()} == {"train": 13, "val": 1, "test": 1}
    graph = dm.dataset[0]  # kept row 0: CCOCCNCCO, contacts (0,5), (1,6), (2,7)
    assert graph.x.shape == (9, 9) and graph.edge_attr.shape == (16, 3)
    assert graph.edge_label_index.t().tolist() == [[0, 5], [1, 6], [2, 7], [5, 0], [6, 1], [7, 2]]
    ids = torch.cat([dm.dataset[i].edge_label_id for i in range(len(dm.dataset))])
    assert torch.equal(ids, torch.arange(ids.numel()))
    assert dm.info.node_features.kind == "atom" and dm.info.level == "link"


def test_pcqm_shuffle_split_is_lrgbs_arithmetic() -> None:
    split = shuffle_split(1000)
    perm = np.random.default_rng(42).permutation(1000)
    assert split["train"].tolist() == perm[:899].tolist()  # int((1 - 0.05 - 0.05) * 1000) = 899
    assert len(split["val"]) == 50 and len(split["test"]) == 51
    assert len(set(torch.cat(list(split.values())).tolist())) == 1000


def test_pcqm_missing_file_and_md5(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"pcqm4m-v2-contact/raw/pcqm4m-contact.tsv.gz"):
        pcqm_dm(tmp_path, tmp_path).setup()
    write_pcqm_contact(tmp_path, num_rows=6)
    with pytest.raises(DataError, match="MD5"):
        pcqm_dm(tmp_path, tmp_path).setup()


def test_tsp_reads_pyg_layout(tmp_path: Path) -> None:
    raw = write_tsp(tmp_path)
    dm = LinkLevelDataModule(
        source=TSP(), name="tsp", data_dir=tmp_path, cache_dir=tmp_path / "cache", batch_size=4, metric="f1", **COMMON
    )
    dm.setup()
    info = dm.info
    assert (info.level, info.node_features.dim, info.edge_features.dim) == ("link", 2, 1)  # type: ignore[union-attr]
    assert {k: v.tolist() for k, v in dm.splits.items()} == {"train": list(range(6)), "val": [6, 7], "test": [8, 9]}
    assert dm.dataset is not None
    graph = dm.dataset[7]
    assert torch.equal(graph.edge_label, raw[1][1]["y"]) and torch.equal(graph.edge_label_index, graph.edge_index)
    batch = next(iter(dm.test_dataloader()))
    assert batch.edge_label_index.max() < batch.num_nodes and torch.equal(batch.edge_label_index, batch.edge_index)
    (tmp_path / "TSP" / "raw" / "TSP_v2.pt").write_bytes(pickle.dumps([print], protocol=2))
    with pytest.raises(DataError, match=r"TSP_v2.pt"):
        LinkLevelDataModule(
            source=TSP(), name="tsp", data_dir=tmp_path, cache_dir=tmp_path / "cache2", batch_size=4, metric="f1", **COMMON
        ).setup()
