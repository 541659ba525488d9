"""Train the configured model on a chosen subset of the nodes of a one-graph dataset.

The building block of the analyses that compare models trained on different node sets: the
memorization score of NCMemo (Jamadandi et al., "Memorization in Graph Neural Networks"; models
``f`` on :math:`S_S \\cup S_C` and ``g`` on :math:`S_S \\cup S_I`) and the shadow models of LiRA
(Carlini et al. 2022). The model, head, normalization, optimizer, scheduler and trainer are those of
the composed config, built as :func:`graphbench.tasks.train.train` builds them; only the split differs.
"""

from __future__ import annotations

from pathlib import Path

import lightning as L
import torch
from lightning.pytorch.callbacks import ModelCheckpoint
from omegaconf import DictConfig
from torch import Tensor
from torch_geometric.transforms import LargestConnectedComponents

from graphbench.build.data import build_datamodule
from graphbench.build.model import network_builder, network_width
from graphbench.build.task_module import build_task_module
from graphbench.build.trainer import build_trainer
from graphbench.callbacks.divergence import DivergenceGuard
from graphbench.config.checks import check_config
from graphbench.data.datamodules.node_level import NodeLevelDataModule
from graphbench.data.info import DatasetInfo
from graphbench.run.checkpoints import CHECKPOINTS
from graphbench.vocabulary.errors import ConfigError

#: the best-validation weights of one subset model, under its ``run_dir``
BEST_CHECKPOINT: str = "best.ckpt"
#: which weights predict: the best-validation epoch's, or the last epoch's


def node_datamodule(cfg: DictConfig, largest_component: bool = False) -> NodeLevelDataModule:
    """The set-up DataModule of ``cfg.dataset``, which must be one graph whose nodes carry classes;
    with ``largest_component`` the graph is its largest connected component (PyG's
    :class:`~torch_geometric.transforms.LargestConnectedComponents`: the induced subgraph, nodes in
    their original order), before any other transform."""
    datamodule = build_datamodule(cfg, LargestConnectedComponents() if largest_component else None)
    if not isinstance(datamodule, NodeLevelDataModule) or not datamodule.source.one_graph:
        raise ConfigError(
            f"dataset={cfg.dataset.name} is not a one-graph node-level dataset; training on node subsets needs one "
            "(e.g. cora, texas, syn-cora)"
        )
    datamodule.prepare_data()
    datamodule.setup("fit")
    if datamodule.info.task_type != "multiclass":
        raise ConfigError(
            f"dataset={cfg.dataset.name} is a {datamodule.info.task_type} task; training on node subsets returns class "
            "probabilities and needs a multiclass one"
        )
    return datamodule


def train_on_nodes(
    cfg: DictConfig,
    train_mask: Tensor,
    val_mask: Tensor,
    seed: int,
    run_dir: Path,
    datamodule: NodeLevelDataModule | None = None,
    checkpoint: str = "best",
) -> Tensor:
    """Train the configured model (``cfg.model``/``head``/``normalization``/``optimizer``/``scheduler``/
    ``trainer`` of the composed config) on the one-graph dataset of ``cfg`` with the given boolean
    train/val node masks (the dataset's own split is replaced; every other node is in the test mask),
    select the best-validation checkpoint (``<run_dir>/best.ckpt``), and return the softmax
    probabilities of every node, shape ``[num_nodes, num_classes]``.

    ``seed`` seeds the initial weights and training. ``datamodule`` (from :func:`node_datamodule`) may
    be passed to reuse a loaded dataset across calls; its masks are replaced. ``checkpoint="last"``
    predicts with the last epoch's weights instead of the best-validation ones. Raises
    :class:`~graphbench.callbacks.divergence.Diverged` when training diverges and
    :class:`~graphbench.vocabulary.errors.ConfigError` on bad masks or a dataset that is not one multiclass graph.
    """
    if checkpoint not in CHECKPOINTS:
        raise ConfigError(f"checkpoint={checkpoint!r} is not valid; valid: {list(CHECKPOINTS)}")
    check_config(cfg)
    datamodule = datamodule if datamodule is not None else node_datamodule(cfg)
    train_mask, val_mask = train_mask.bool().cpu(), val_mask.bool().cpu()
    if bool((train_mask & val_mask).any()):
        raise ConfigError("train_on_nodes: the train and val masks share nodes; they must be disjoint")
    if not bool(train_mask.any()) or not bool(val_mask.any()):
        raise ConfigError("train_on_nodes: the train and val masks must each select at least one node")
    datamodule.use_split_masks(train_mask, val_mask, ~(train_mask | val_mask))
    info: DatasetInfo = datamodule.info

    make_network = network_builder(cfg, info)
    hidden_dim = network_width(cfg, make_network)
    L.seed_everything(seed, workers=True, verbose=False)
    module = build_task_module(cfg, make_network(hidden_dim), info)

    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    best = ModelCheckpoint(
        dirpath=run_dir,
        filename=BEST_CHECKPOINT.removesuffix(".ckpt"),
        monitor=info.monitor,
        mode="max" if info.higher_is_better else "min",
        save_top_k=1,
        save_weights_only=True,
        enable_version_counter=False,
    )
    trainer = build_trainer(cfg, [best, DivergenceGuard()], [], str(run_dir), enable_model_summary=False)
    trainer.fit(module, datamodule=datamodule)
    if trainer.interrupted:
        raise KeyboardInterrupt
    # Lightning's fast_dev_run saves no checkpoint: its one epoch's weights are the ones used
    if checkpoint == "best" and best.best_model_path:
        state = torch.load(best.best_model_path, map_location="cpu", weights_only=False)["state_dict"]
        module.load_state_dict(state)
    module = module.cpu().eval()
    assert datamodule.full_batch is not None
    with torch.no_grad():
        logits = module(datamodule.full_batch)
    return torch.softmax(logits.float(), dim=-1)
