"""End to end through ``graphbench.tasks.train.train`` on fixtures: the node- and link-level datasets with
the GraphTaskModule / LinkTaskModule, as ``run.py`` runs them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from omegaconf import DictConfig

from graphbench.data.io.raw_files import RawFile
from graphbench.data.sources.link import pcqm_contact
from graphbench.modules.losses import BalancedBCEWithLogitsLoss
from graphbench.tasks.train import train
from tests.data.sources.link.link_fixtures import write_ogbl_collab, write_pcqm_contact, write_tsp
from tests.data.sources.node.planetoid_fixture import write_planetoid

FAST = ["trainer.max_epochs=1", "trainer.enable_progress_bar=false", "model.hidden_dim=8", "model.num_layers=2", "logger=none"]


def run(compose_cfg: Callable[..., DictConfig], overrides: list[str]) -> dict:
    results = train(compose_cfg([*FAST, *overrides]))
    assert results.status == "completed"
    return results


def test_cora_fixture_node_level(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    write_planetoid(tmp_path / "data")
    results = run(compose_cfg, ["dataset=cora", "model=gcn", f"paths.data_dir={tmp_path / 'data'}"])
    assert {"train/accuracy", "val/accuracy", "test/accuracy"} <= set(results.metrics)


def test_pattern_node_level_weighted_accuracy(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    results = run(
        compose_cfg,
        ["dataset=pattern", "dataset.num_patterns=1", "dataset.graphs_per_pattern=[8,2,2]", "model=gcn", "dataset.batch_size=4"],
    )
    assert 0.0 <= results.metrics["test/weighted_accuracy"] <= 1.0


def test_ogbl_collab_hits(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    write_ogbl_collab(tmp_path / "data")
    results = run(
        compose_cfg,
        [
            "dataset=collab",
            "model=gatedgcn",
            "sampler.batch_size=40",  # positive training pairs per step (one graph: the sampler's)
            f"paths.data_dir={tmp_path / 'data'}",
            "dataset.use_val_edges_as_input=true",
        ],
    )
    assert {"train/hits@50", "val/hits@50", "test/hits@50", "test/loss"} <= set(results.metrics)
    import numpy as np

    pred = np.load(tmp_path / "run" / "predictions.npz")
    assert pred["y_true"].tolist() == [1.0] * 10 + [0.0] * 60 and pred["index"].tolist() == list(range(70))


def test_pcqm_contact_mrr_variants(
    compose_cfg: Callable[..., DictConfig], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_pcqm_contact(tmp_path / "data")
    monkeypatch.setattr(pcqm_contact, "PCQM_CONTACT_FILES", [RawFile(pcqm_contact.PCQM_CONTACT_FILES[0].relpath)])
    results = run(
        compose_cfg,
        [
            "dataset=pcqm-contact",
            "model=gine",
            "dataset.batch_size=4",
            "dataset.featurize_workers=1",
            f"paths.data_dir={tmp_path / 'data'}",
        ],
    )
    metrics = results.metrics
    for name in ("mrr", "mrr_filtered", "mrr_ext_filtered", "hits@1", "hits@3_filtered", "hits@10_ext_filtered"):
        assert f"test/{name}" in metrics and 0.0 <= metrics[f"test/{name}"] <= 1.0
    assert metrics["test/mrr"] <= metrics["test/mrr_filtered"] <= metrics["test/mrr_ext_filtered"]


def test_tsp_edge_classification_f1(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    write_tsp(tmp_path / "data")
    results = run(compose_cfg, ["dataset=tsp", "model=gatedgcn", "dataset.batch_size=4", f"paths.data_dir={tmp_path / 'data'}"])
    assert "test/f1" in results.metrics


def test_balanced_bce_weights_classes_by_the_other_frequency() -> None:
    logits, labels = torch.tensor([0.0, 0.0, 0.0, 0.0]), torch.tensor([1.0, 0.0, 0.0, 0.0])
    # w1 = 3/4, w0 = 1/4: every loss is log 2, so the weighted mean is log 2
    assert BalancedBCEWithLogitsLoss()(logits, labels).item() == pytest.approx(torch.log(torch.tensor(2.0)).item())
    logits = torch.tensor([2.0, 0.0, 0.0, 0.0])
    expected = (0.75 * torch.nn.functional.softplus(torch.tensor(-2.0)) + 3 * 0.25 * torch.log(torch.tensor(2.0))) / 1.5
    assert BalancedBCEWithLogitsLoss()(logits, labels).item() == pytest.approx(expected.item())
