"""PCQM-Contact (LRGB): the LRGB layout read, LRGB's shuffle split, missing files and MD5 named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from graphbench.build.data import datamodule_from_keys
from graphbench.data.datamodules import LinkLevelDataModule
from graphbench.data.io.raw_files import RawFile
from graphbench.data.sources.link import pcqm_contact
from graphbench.data.sources.link.pcqm_contact import PCQMContact, shuffle_split
from graphbench.vocabulary.errors import DataError
from tests.data.sources.link.link_fixtures import write_pcqm_contact

COMMON: dict[str, Any] = dict(task_type="binary", higher_is_better=True, split="official")


@pytest.fixture
def pcqm_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_pcqm_contact(tmp_path)
    # the fixture is not the official file, so skip the MD5 check of the real one
    monkeypatch.setattr(pcqm_contact, "PCQM_CONTACT_FILES", [RawFile(pcqm_contact.PCQM_CONTACT_FILES[0].relpath)])
    return tmp_path


def pcqm_dm(root: Path, tmp_path: Path) -> LinkLevelDataModule:
    keys = dict(name="pcqm-contact", data_dir=root, cache_dir=tmp_path / "cache", batch_size=4, metric="mrr_filtered", **COMMON)
    return datamodule_from_keys(LinkLevelDataModule, PCQMContact(featurize_workers=1), keys)


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
