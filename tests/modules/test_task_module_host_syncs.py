"""Host-device syncs in the training steps of the LRGB-tuned recipes (GCN, GINE, GatedGCN on
Peptides-func, conf/experiment/lrgb-tuned/): a GPU runs a step of these in about a millisecond, so
every point where the host waits for the device (``.item()``, ``.cpu()``, ``.tolist()``,
``nonzero``, a boolean-mask index, ``bool(tensor)``) costs as much as the step. The steps run
through a Lightning ``Trainer`` on a batch of a few hand-built graphs in Peptides-func's feature
layout (OGB atom and bond features, RWSE), and :class:`HostTraffic` records every such call made
between ``on_train_batch_start`` and ``on_train_batch_end`` (forward, loss, backward, clipping and
the optimizer step). Only the calls listed in :data:`ALLOWED_SYNCS` may appear (docs/gpu.md).
The same window checks that graphbench's code makes no tensor on the host (a factory call without
``device=``, see tests/test_device_generic.py) while it runs.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import lightning as L
import pytest
import torch
from omegaconf import DictConfig
from torch import Tensor
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader

from graphbench.build.model import network_builder
from graphbench.build.task_module import build_task_module
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.transforms.rwse import RWSE
from tests.paths import REPO

#: the Tensor methods and torch functions that make the host wait for the device
SYNCS: dict[Callable[..., Any], str] = {
    Tensor.item: "item",
    Tensor.cpu: "cpu",
    Tensor.tolist: "tolist",
    Tensor.numpy: "numpy",
    torch.nonzero: "nonzero",
    Tensor.nonzero: "nonzero",
    torch.argwhere: "nonzero",
    torch.masked_select: "masked_select",
    Tensor.masked_select: "masked_select",
    Tensor.__bool__: "bool",
    Tensor.__int__: "int",
    Tensor.__float__: "float",
}

#: the syncs a training step may make, by where they are made, and why they are no cost on a GPU
ALLOWED_SYNCS: dict[str, str] = {
    "torch/optim/": (
        "AdamW unfused (speedups=off, mixed precision) reads its step counters with .item(); torch keeps them "
        "on the host unless capturable=True, so no device is waited for"
    ),
    "graphbench/speedups/": "CPU-only kernels (the compiled dropout); graphbench.speedups steps them aside on other devices",
    "graphbench/modules/losses.py": (
        "MaskedBCEWithLogitsLoss selects the labelled logits and targets with a boolean mask, twice per step; the sync-free "
        "form changed the recorded reference numbers (float summation order), see its docstring"
    ),
    "torch_geometric/utils/loop.py": (
        "GCN only: PyG's gcn_norm finds existing self-loops with a boolean mask, once per batch (EdgePlan caches "
        "it for all layers); graphbench.modules.propagation.traceable_gcn_norm, used under torch.compile, has none"
    ),
}

LRGB_MODELS = ("gcn", "gine", "gatedgcn")

PEPTIDES_FUNC = DatasetInfo(
    name="peptides-func",
    level="graph",
    task_type="multilabel",
    num_outputs=10,
    metric="ap",
    higher_is_better=True,
    node_features=FeatureSpec("atom"),
    edge_features=FeatureSpec("bond"),
)


def _is_boolean_mask(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(part, Tensor) and part.dtype == torch.bool for part in parts)


class HostTraffic(TorchFunctionMode):
    """Records, by the file and line that made them, the host-device syncs (:data:`SYNCS` and
    boolean-mask ``__getitem__``/``__setitem__``) and the tensor factory calls without ``device=``
    (that are not given tensors to take the device from)."""

    def __init__(self) -> None:
        super().__init__()
        self.syncs: Counter[tuple[str, str]] = Counter()
        self.host_factories: Counter[tuple[str, str]] = Counter()
        self.factories = _device_constructors()

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        kind = SYNCS.get(func)
        if func in (Tensor.__getitem__, Tensor.__setitem__) and len(args) > 1 and _is_boolean_mask(args[1]):
            kind = "boolean mask"
        caller = sys._getframe(1)
        where = f"{caller.f_code.co_filename}:{caller.f_lineno}"
        if kind is not None:
            self.syncs[(kind, where)] += 1
        # a constructor given tensors (``sparse_csr_tensor(crow, col, values)``) takes their device
        made_from_tensors = any(isinstance(arg, Tensor) for arg in args)
        if func in self.factories and kwargs.get("device") is None and not made_from_tensors:
            self.host_factories[(getattr(func, "__name__", str(func)), where)] += 1
        return func(*args, **kwargs)


class Window(L.Callback):
    """Enters ``mode`` for each training batch: from ``on_train_batch_start`` to ``on_train_batch_end``."""

    def __init__(self, mode: HostTraffic) -> None:
        self.mode = mode
        self.steps = 0

    def on_train_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any, batch_idx: int) -> None:
        self.mode.__enter__()

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        self.mode.__exit__(None, None, None)
        self.steps += 1


def peptide_like(num_nodes: int, ring: bool, seed: int) -> Data:
    """A chain (or ring) of ``num_nodes`` atoms with OGB atom/bond feature columns (9 and 3, small
    values 0 and 1, valid in every column), 10 binary labels, and Peptides-func's RWSE (20 steps)."""
    generator = torch.Generator().manual_seed(seed)
    first = torch.arange(num_nodes if ring else num_nodes - 1)
    second = (first + 1) % num_nodes
    edge_index = torch.stack([torch.cat([first, second]), torch.cat([second, first])])
    graph = Data(
        x=torch.randint(0, 2, (num_nodes, 9), generator=generator),
        edge_index=edge_index,
        edge_attr=torch.randint(0, 2, (edge_index.size(1), 3), generator=generator),
        y=torch.randint(0, 2, (1, 10), generator=generator).float(),
    )
    return RWSE(k=20)(graph)


def unexplained(calls: Counter[tuple[str, str]], allowed: dict[str, str]) -> list[str]:
    return [f"{kind} at {where} ({count}x)" for (kind, where), count in calls.items() if not any(a in where for a in allowed)]


@pytest.mark.parametrize("model", LRGB_MODELS)
def test_training_steps_of_the_lrgb_tuned_recipes_make_only_the_allowed_host_syncs(
    compose_cfg: Callable[..., DictConfig], model: str
) -> None:
    cfg = compose_cfg([f"experiment=lrgb-tuned/peptides-func-{model}"])
    torch.manual_seed(0)
    task = build_task_module(cfg, network_builder(cfg, PEPTIDES_FUNC)(32), PEPTIDES_FUNC)  # 4 channels beside the 28 of RWSE
    graphs = [peptide_like(n, ring=n % 2 == 0, seed=n) for n in (5, 6, 7, 4, 8, 5)]
    mode = HostTraffic()
    window = Window(mode)
    trainer = L.Trainer(
        max_steps=3,
        accelerator="cpu",
        gradient_clip_val=float(cfg.trainer.gradient_clip_val),
        limit_val_batches=0,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[window],
    )
    trainer.fit(task, DataLoader(graphs, batch_size=3))
    assert window.steps == 3
    syncs = unexplained(mode.syncs, ALLOWED_SYNCS)
    assert not syncs, "host-device syncs in a training step (see ALLOWED_SYNCS):\n" + "\n".join(syncs)
    ours = str(REPO / "src" / "graphbench")
    host_made = [
        f"{name} at {where}"
        for (name, where), _ in mode.host_factories.items()
        if where.startswith(ours) and "graphbench/speedups/" not in where
    ]
    assert not host_made, "tensors made without device= in a training step:\n" + "\n".join(host_made)
    # the counting sees the step: the masked loss selects its logits and targets by mask, twice a step;
    # the fused AdamW (speedups=auto) reads no step counter
    assert sum(count for (kind, where), count in mode.syncs.items() if "modules/losses.py" in where) == 2 * 3
    assert not any("torch/optim/" in where for _, where in mode.syncs)


def test_host_traffic_sees_each_kind_of_sync_and_host_factory() -> None:
    x = torch.tensor([0.5, 2.0, 3.0])
    with HostTraffic() as mode:
        x.item() if x.numel() == 1 else x[0].item()
        x.tolist()
        x[x > 1]
        x[x > 2] = 0.0
        torch.nonzero(x)
        bool(x[0])
        torch.zeros(2)
        torch.zeros(2, device=x.device)
    assert sorted(kind for kind, _ in mode.syncs) == ["bool", "boolean mask", "boolean mask", "item", "nonzero", "tolist"]
    assert [name for name, _ in mode.host_factories] == ["zeros"]
    assert all(where.startswith(__file__) for _, where in mode.syncs)
