"""train_on_nodes: the configured model trained on chosen node masks of a one-graph dataset (a Texas
fixture in the Geom-GCN raw layout)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig

from graphbench.analysis.subset_training import node_datamodule, train_on_nodes
from graphbench.vocabulary.errors import ConfigError
from tests.data.sources.node.test_geom_gcn import write_geom_gcn
from tests.paths import REPO

N = 30


def texas_cfg(tmp_path: Path, *extra: str) -> DictConfig:
    write_geom_gcn(tmp_path / "data", "texas", num_nodes=N)
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return compose(
            "config",
            overrides=[
                "dataset=texas",
                "model=gcn",
                "model.hidden_dim=8",
                "model.num_layers=1",
                "normalization=none",
                "scheduler=none",
                "trainer=cpu",
                "trainer.max_epochs=3",
                "trainer.enable_progress_bar=false",
                "optimizer.lr=0.05",
                f"paths.data_dir={tmp_path / 'data'}",
                f"paths.cache_dir={tmp_path / 'cache'}",
                f"paths.output_dir={tmp_path / 'out'}",
                *extra,
            ],
        )


def masks() -> tuple[torch.Tensor, torch.Tensor]:
    train, val = torch.zeros(N, dtype=torch.bool), torch.zeros(N, dtype=torch.bool)
    train[:15], val[15:22] = True, True
    return train, val


def test_returns_probabilities_of_every_node_and_is_deterministic_per_seed(tmp_path: Path) -> None:
    cfg = texas_cfg(tmp_path)
    dm = node_datamodule(cfg)
    train, val = masks()
    probs = train_on_nodes(cfg, train, val, seed=0, run_dir=tmp_path / "a", datamodule=dm)
    assert probs.shape == (N, dm.info.num_outputs)
    assert torch.allclose(probs.sum(dim=1), torch.ones(N), atol=1e-5) and bool((probs >= 0).all())
    assert (tmp_path / "a" / "best.ckpt").is_file()
    # the masks of the split were replaced: train/val as given, the rest is test
    assert torch.equal(dm.graph.train_mask, train) and torch.equal(dm.graph.test_mask, ~(train | val))
    again = train_on_nodes(cfg, train, val, seed=0, run_dir=tmp_path / "b", datamodule=dm)
    assert torch.equal(probs, again)
    other = train_on_nodes(cfg, train, val, seed=1, run_dir=tmp_path / "c", datamodule=dm)
    assert not torch.equal(probs, other)
    last = train_on_nodes(cfg, train, val, seed=0, run_dir=tmp_path / "d", datamodule=dm, checkpoint="last")
    assert last.shape == probs.shape


def test_bad_masks_are_one_clear_error(tmp_path: Path) -> None:
    cfg = texas_cfg(tmp_path)
    train, val = masks()
    with pytest.raises(ConfigError, match="share nodes"):
        train_on_nodes(cfg, train, train, seed=0, run_dir=tmp_path / "a")
    with pytest.raises(ConfigError, match="at least one node"):
        train_on_nodes(cfg, train, torch.zeros(N, dtype=torch.bool), seed=0, run_dir=tmp_path / "a")
    with pytest.raises(ConfigError, match="boolean vector of 30 nodes"):
        train_on_nodes(cfg, train[:20], val[:20], seed=0, run_dir=tmp_path / "a")
    with pytest.raises(ConfigError, match="checkpoint='final' is not valid"):
        train_on_nodes(cfg, train, val, seed=0, run_dir=tmp_path / "a", checkpoint="final")
