"""CSL: the generated graphs (exact structure), determinism, and the 5-fold index files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.sources.graph.csl import CSL, CSL_SKIPS, csl_edge_index, generate_csl
from graphbench.vocabulary.errors import ConfigError, DataError
from tests.conftest import real_data_root
from tests.data._datamodules import graph_level


def test_csl_graph_is_a_cycle_with_skip_links() -> None:
    edges = {tuple(e) for e in csl_edge_index(41, 5).T.tolist()}
    expected = {(i, (i + d) % 41) for i in range(41) for d in (1, 5, -1, -5)}
    assert edges == {(a, b % 41) for a, b in expected}
    assert len(edges) == 4 * 41  # 4-regular, both directions


def test_generated_classes_are_permuted_copies() -> None:
    graphs, y = generate_csl(41, CSL_SKIPS, 15, seed=0)
    assert len(graphs) == 150 and y.tolist() == [c for c in range(10) for _ in range(15)]
    for g, _cls in zip(graphs, y.tolist()):
        degree = torch.bincount(g[0], minlength=41)
        assert torch.all(degree == 4)
    # same class: isomorphic but (almost surely) differently labelled
    assert not torch.equal(graphs[0], graphs[1])
    again, _ = generate_csl(41, CSL_SKIPS, 15, seed=0)
    assert all(torch.equal(a, b) for a, b in zip(graphs, again))


def write_folds(root: Path) -> None:
    folder = root / "benchmarking-gnns" / "CSL"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    rows = {"train": [], "val": [], "test": []}
    for _ in range(5):
        order = np.concatenate([rng.permutation(15) + 15 * c for c in range(10)]).reshape(10, 15)
        rows["train"].append(order[:, :9].ravel())
        rows["val"].append(order[:, 9:12].ravel())
        rows["test"].append(order[:, 12:].ravel())
    for split, folds in rows.items():
        (folder / f"CSL_{split}.index").write_text("".join(",".join(map(str, f)) + "\n" for f in folds))


def datamodule(root: Path, cache: Path, **source_args: object) -> GraphLevelDataModule:
    source = CSL(**source_args)
    return graph_level(
        source, root, cache, name="csl", task_type="multiclass", metric="accuracy", higher_is_better=True, batch_size=5
    )


def test_datamodule_uses_the_fold(tmp_path: Path) -> None:
    write_folds(tmp_path / "data")
    dm = datamodule(tmp_path / "data", tmp_path / "cache", split_index=4)
    dm.setup()
    assert [len(dm.splits[s]) for s in ("train", "val", "test")] == [90, 30, 30]
    assert torch.bincount(dm.dataset.collated.y[dm.splits["test"]]).tolist() == [3] * 10
    assert dm.info.num_outputs == 10 and dm.info.node_features.kind == "constant"
    batch = next(iter(dm.train_dataloader()))
    assert batch.num_graphs == 5 and batch.x.shape == (205, 1)


def test_wrong_split_index_and_missing_index_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"valid values are 0\.\.4"):
        datamodule(tmp_path, tmp_path / "cache", split_index=5)
    with pytest.raises(DataError) as err:
        datamodule(tmp_path, tmp_path / "cache").setup()
    assert all(f"CSL_{s}.index" in str(err.value) for s in ("train", "val", "test"))


@pytest.mark.real_data
def test_real_csl_folds_are_stratified_by_class(tmp_path: Path) -> None:
    root = real_data_root()
    for k in range(5):
        dm = datamodule(root, tmp_path, split_index=k)
        dm.setup()
        for split, per_class in (("train", 9), ("val", 3), ("test", 3)):
            assert torch.bincount(dm.dataset.collated.y[dm.splits[split]]).tolist() == [per_class] * 10
