r"""The empirical neural tangent kernel during training, and its alignment with the labels and the graph.

NCMemo (Jamadandi et al., "Memorization in Graph Neural Networks") relates memorization to how well the
empirical NTK of a GNN aligns with the labels and with the graph; Yang et al. (ICML 2024, "How Graph
Neural Networks Learn: Lessons from Training Dynamics") show that during training the NTK of a GNN
aligns with the graph's adjacency powers, and that this alignment helps exactly when the graph itself
aligns with the labels. :class:`NTKAlignment` records the three alignments along a run.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lightning as L
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, vjp, vmap
from torch_geometric.utils import add_self_loops, degree, remove_self_loops, to_undirected

from graphbench.data.store.loader import GraphIds
from graphbench.vocabulary.errors import ArgumentError, ConfigError


@contextmanager
def evaluation_mode(model: nn.Module) -> Iterator[None]:
    """``model.eval()`` inside the block; every submodule's own ``training`` flag restored after it."""
    modes = [(module, module.training) for module in model.modules()]
    model.eval()
    try:
        yield
    finally:
        for module, training in modes:
            module.training = training


def _activation_elements(model: nn.Module, inputs: Any) -> int:
    """Elements of the tensors that autograd saves in one forward pass of ``model`` and that depend on
    the parameters: about the size of the activation gradients one vector-Jacobian product carries
    (saved inputs and indices, which need no gradient, are not counted)."""
    total = 0

    def pack(tensor: Tensor) -> Tensor:
        nonlocal total
        total += tensor.numel() if tensor.requires_grad else 0
        return tensor

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        model(inputs)
    return total


def empirical_ntk(model: nn.Module, inputs: Any, rows: Tensor | None = None, *, max_jacobian_elements: int = 2**27) -> Tensor:
    r"""The empirical NTK :math:`\Theta \in \mathbb{R}^{R \times R}` of ``model`` on the rows ``rows`` of
    its output ``model(inputs)`` (``[N, C]``; all rows when ``rows`` is ``None``):

    .. math::
        \Theta_{ij} = \sum_{k=1}^{C} \big\langle \nabla_\theta f_k(x_i), \nabla_\theta f_k(x_j) \big\rangle
        = \Big(\sum_{k=1}^{C} J_k J_k^\top\Big)_{ij},
        \qquad J_k = \frac{\partial f_k(x_S)}{\partial \theta} \in \mathbb{R}^{R \times P},

    the sum over the output logits :math:`k` of the kernels of each logit, with :math:`\theta` all
    ``P`` trainable parameters (the ``nn`` kernel of NCMemo and of Yang et al. 2024).

    Computed in evaluation mode (dropout off, BatchNorm on its running statistics; every submodule's
    mode is restored after) with ``torch.func``: one forward pass (``functional_call`` under ``vjp``),
    then the rows of each :math:`J_k` as vector-Jacobian products, ``vmap``-ed in chunks. Memory is
    bounded by ``max_jacobian_elements`` numbers twice over: :math:`J_k` is built for a slice of ``s``
    parameters at a time with ``R * s <= max_jacobian_elements`` (one slice when ``R * P`` fits; each
    further slice repeats the products), and a chunk holds as many products as fit when each needs
    ``P`` numbers plus the activations' gradients (:func:`_activation_elements`). Work: ``C * R``
    backward passes per slice.
    """
    if max_jacobian_elements < 1:
        raise ConfigError(f"max_jacobian_elements must be a positive number of tensor elements, got {max_jacobian_elements}")
    params = {name: p.detach() for name, p in model.named_parameters() if p.requires_grad}
    if not params:
        raise ConfigError("the model has no trainable parameters, so its NTK is zero; nothing to compute")
    num_params = sum(p.numel() for p in params.values())

    def outputs(params: dict[str, Tensor]) -> Tensor:
        out = functional_call(model, params, (inputs,))
        out = out if rows is None else out[rows]
        return out.reshape(out.size(0), -1)

    with evaluation_mode(model):
        per_product = num_params + _activation_elements(model, inputs)
        with torch.no_grad():  # torch.func differentiates on its own; no .grad is touched
            out, vjp_fn = vjp(outputs, params)
            num_rows, num_outputs = out.shape
            at_once = max(1, min(num_rows, max_jacobian_elements // per_product))
            slice_size = max(1, max_jacobian_elements // num_rows)
            theta = out.new_zeros(num_rows, num_rows)
            for k in range(num_outputs):
                for start in range(0, num_params, slice_size):
                    stop = min(start + slice_size, num_params)
                    jacobian = out.new_empty(num_rows, stop - start)  # rows of J_k, parameters start:stop
                    for first in range(0, num_rows, at_once):
                        chunk = torch.arange(first, min(first + at_once, num_rows), device=out.device)
                        cotangents = out.new_zeros(chunk.numel(), num_rows, num_outputs)
                        cotangents[torch.arange(chunk.numel(), device=out.device), chunk, k] = 1.0
                        (grads,) = vmap(vjp_fn)(cotangents)
                        gradient = torch.cat([grads[name].reshape(chunk.numel(), -1) for name in params], dim=1)
                        jacobian[chunk] = gradient[:, start:stop]
                    theta += jacobian @ jacobian.T
    return theta


def center_kernel(kernel: Tensor) -> Tensor:
    r""":math:`HKH` with :math:`H = I - \tfrac{1}{n}\mathbf{1}\mathbf{1}^\top`: the kernel minus its row
    means and column means plus its grand mean (the centring of Cortes et al. 2012 and of CKA,
    Kornblith et al. 2019)."""
    return kernel - kernel.mean(dim=0, keepdim=True) - kernel.mean(dim=1, keepdim=True) + kernel.mean()


def alignment(k1: Tensor, k2: Tensor, centered: bool = False) -> float:
    r"""Kernel alignment :math:`A(K_1, K_2) = \langle K_1, K_2 \rangle_F / (\|K_1\|_F \|K_2\|_F)`.

    ``centered=False``: the uncentred alignment of NCMemo (Jamadandi et al., "Memorization in Graph
    Neural Networks"; Cristianini et al. 2001). ``centered=True``: centred kernel alignment (CKA),
    :math:`A(HK_1H, HK_2H)` with :math:`H = I - \tfrac{1}{n}\mathbf{1}\mathbf{1}^\top` (Cortes et al.
    2012, Kornblith et al. 2019), as Yang et al. (ICML 2024)'s code computes it. Computed in float64;
    NaN when either (centred) kernel is zero, where the alignment is undefined.
    """
    if k1.shape != k2.shape or k1.dim() != 2:
        raise ValueError(f"alignment needs two kernel matrices of one shape, got {tuple(k1.shape)} and {tuple(k2.shape)}")
    k1, k2 = k1.double(), k2.to(k1.device).double()
    if centered:
        k1, k2 = center_kernel(k1), center_kernel(k2)
    norms = torch.linalg.matrix_norm(k1) * torch.linalg.matrix_norm(k2)
    return float((k1 * k2).sum() / norms) if norms > 0 else math.nan


def normalized_adjacency_power(edge_index: Tensor, num_nodes: int, power: int, index: Tensor | None = None) -> Tensor:
    r"""Dense :math:`(\hat A^{p})_{SS}` for :math:`\hat A = D^{-1/2}(A + I)D^{-1/2}`, the GCN propagation
    matrix of Kipf & Welling (2017) on the undirected graph (existing self-loops dropped before
    :math:`I` is added, :math:`D` the degrees of :math:`A + I`), restricted to the nodes ``index``
    (all nodes when ``None``). ``p = 2L`` for an ``L``-layer GNN gives the graph kernel whose
    alignment with the NTK Yang et al. (ICML 2024) and NCMemo measure.

    Computed as :math:`\hat A^{p} E_S` by ``p`` sparse products with the columns :math:`E_S` of the
    identity, so memory is ``num_nodes * |S|``, never ``num_nodes**2`` for a subset. PyG's
    ``to_undirected``, ``remove_self_loops``, ``add_self_loops`` and ``degree`` build :math:`\hat A`
    (``gcn_norm`` would keep existing self-loops, so the diagonal of :math:`A + I` could differ).
    """
    if power < 0:
        raise ValueError(f"power must be >= 0, got {power}")
    edge_index, _ = remove_self_loops(to_undirected(edge_index, num_nodes=num_nodes))
    edge_index, _ = add_self_loops(edge_index, num_nodes=num_nodes)
    row, col = edge_index
    deg_inv_sqrt = degree(col, num_nodes, dtype=torch.float64).pow(-0.5)
    weight = deg_inv_sqrt[row] * deg_inv_sqrt[col]
    a_hat = torch.sparse_coo_tensor(edge_index, weight, (num_nodes, num_nodes), check_invariants=True).coalesce()
    index = torch.arange(num_nodes, device=edge_index.device) if index is None else index.to(edge_index.device)
    columns = torch.zeros(num_nodes, index.numel(), dtype=torch.float64, device=edge_index.device)
    columns[index, torch.arange(index.numel(), device=edge_index.device)] = 1.0
    for _ in range(power):
        columns = torch.sparse.mm(a_hat, columns)
    return columns[index]


def target_kernel(y: Tensor, task_type: str, num_classes: int) -> Tensor:
    r""":math:`YY^\top` for the targets ``y``: :math:`Y` one-hot for multiclass tasks (so
    :math:`(YY^\top)_{ij} = [y_i = y_j]`), else the label vectors themselves (binary, multilabel,
    regression), missing (NaN) labels as 0."""
    if task_type == "multiclass":
        labels = F.one_hot(y.long().view(-1), num_classes).double()
    else:
        labels = torch.nan_to_num(y.double().view(y.size(0), -1), nan=0.0)
    return labels @ labels.T


class NTKAlignment(L.Callback):
    r"""Every ``every_n_epochs`` training epochs (and before the first), the empirical NTK
    :math:`\Theta_t` (:func:`empirical_ntk`) on a fixed subset :math:`S` and its alignments
    (:func:`alignment`), logged at epoch end as

    - ``ntk/kernel_target_alignment``: :math:`A(\Theta_t, YY^\top)` (:func:`target_kernel`),
    - ``ntk/kernel_graph_alignment``: :math:`A(\Theta_t, \hat A^{2L})` (:func:`normalized_adjacency_power`),
    - ``ntk/graph_target_alignment``: :math:`A(\hat A^{2L}, YY^\top)` (constant in training),

    each uncentred (the NCMemo definition; no suffix) and centred (``..._centered``: CKA as Yang et al.
    2024 compute it). Graph-level tasks have no graph kernel over examples: only the kernel-target pair.

    :math:`S` is ``num_nodes`` nodes (node level: of the first training batch, the whole graph under
    full-batch training; of the ``split`` mask's nodes when ``split`` is set) or ``num_graphs`` training
    graphs (graph level), drawn once with ``seed`` (all of them when fewer). :math:`L` is
    ``num_layers``, or the number of message-passing layers of ``pl_module.network.layers``.
    The curve is kept in :attr:`history` (``epoch`` = training epochs completed) and checkpointed, and
    rewritten to ``<trainer.default_root_dir>/<csv_name>`` after each computation (``csv_name=None``: no file).
    :meth:`final_metrics` gives the last measurement's alignments as ``ntk/<name>_final``: ``train``
    records them among ``results.json``'s metrics, and ``run.py`` prints them.
    A measurement costs ``C * |S|`` backward passes (:func:`empirical_ntk`; Cora with ``|S| = 200``: 1,400,
    a few minutes on two CPU cores, seconds on a GPU): raise ``every_n_epochs`` or lower ``num_nodes`` on a CPU.
    """

    def __init__(
        self,
        every_n_epochs: int = 1,
        num_nodes: int = 200,
        num_graphs: int = 100,
        seed: int = 0,
        max_jacobian_elements: int = 2**27,
        split: str | None = None,
        num_layers: int | None = None,
        csv_name: str | None = "ntk_alignment.csv",
    ) -> None:
        if every_n_epochs < 1:
            raise ArgumentError(f"every_n_epochs={every_n_epochs} must be >= 1")
        for name, count in (("num_nodes", num_nodes), ("num_graphs", num_graphs)):
            if count < 2:
                raise ArgumentError(f"{name}={count} must be >= 2 (an alignment compares pairs)")
        if split not in (None, "train", "val", "test"):
            raise ArgumentError(f"split={split!r} is not valid; valid: null (all nodes), train, val, test")
        self.every_n_epochs = every_n_epochs
        self.num_nodes = num_nodes
        self.num_graphs = num_graphs
        self.seed = seed
        self.max_jacobian_elements = max_jacobian_elements
        self.split = split
        self.num_layers = num_layers
        self.csv_name = csv_name
        self.history: list[dict[str, float]] = []
        self._inputs: Any = None
        self._rows: Tensor | None = None
        self._fixed: dict[str, Tensor] = {}  # the kernels that do not change in training

    def _draw(self, count: int, limit: int, device: torch.device) -> Tensor:
        """``limit`` of ``range(count)`` drawn with ``self.seed``, sorted (all when ``count <= limit``),
        on ``device``. The draw is made by a host generator, so that the sample is the same on every
        device."""
        if count <= limit:
            return torch.arange(count, device=device)
        drawn = torch.randperm(count, generator=torch.Generator().manual_seed(self.seed))[:limit]
        return drawn.sort().values.to(device)

    def _prepare(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Draw :math:`S` once and build the kernels that stay fixed: the targets' and the graph's."""
        info = pl_module.info
        loader = trainer.datamodule.train_dataloader() if trainer.datamodule is not None else trainer.train_dataloader
        if info.level == "node":
            batch = next(iter(loader))
            candidates = torch.arange(batch.num_nodes, device=batch.edge_index.device)
            if self.split is not None:
                candidates = batch[f"{self.split}_mask"].nonzero().view(-1)
            rows = candidates[self._draw(candidates.numel(), self.num_nodes, candidates.device)]
            targets = batch.y[rows]
            num_layers = self.num_layers if self.num_layers is not None else len(getattr(pl_module.network, "layers", ()))
            if num_layers < 1:
                raise ConfigError("callbacks.ntk cannot tell the number of message-passing layers: set callbacks.ntk.num_layers")
            self._fixed["graph"] = normalized_adjacency_power(batch.edge_index, batch.num_nodes, 2 * num_layers, rows)
        elif info.level == "graph":
            picked = self._draw(len(loader.dataset), self.num_graphs, torch.device("cpu"))  # dataset positions
            batch = loader.collate_fn([loader.dataset[int(i)] for i in picked])
            if isinstance(batch, GraphIds):  # dataset.batch_on_device: the DataModule gathers it on the device
                batch = trainer.datamodule.transfer_batch_to_device(batch, pl_module.device, 0)
            rows, targets = None, batch.y
        else:
            raise ConfigError(
                f"callbacks.ntk supports node- and graph-level tasks, not {info.level!r} ones; remove callbacks.ntk"
            )
        self._inputs = batch.to(pl_module.device)
        self._rows = None if rows is None else rows.to(pl_module.device)
        self._fixed["target"] = target_kernel(targets, info.task_type, info.num_outputs)

    def _measure(self, trainer: L.Trainer, pl_module: L.LightningModule, epoch: int) -> dict[str, float] | None:
        if epoch % self.every_n_epochs or any(record["epoch"] == epoch for record in self.history) or not trainer.is_global_zero:
            return None
        if self._inputs is None:
            self._prepare(trainer, pl_module)
        with torch.inference_mode(False):
            theta = empirical_ntk(pl_module.network, self._inputs, self._rows, max_jacobian_elements=self.max_jacobian_elements)
        pairs = {"kernel_target": (theta, self._fixed["target"])}
        if "graph" in self._fixed:
            pairs["kernel_graph"] = (theta, self._fixed["graph"])
            pairs["graph_target"] = (self._fixed["graph"], self._fixed["target"])
        record: dict[str, float] = {"epoch": epoch}
        for name, (k1, k2) in pairs.items():
            record[f"ntk/{name}_alignment"] = alignment(k1, k2, centered=False)
            record[f"ntk/{name}_alignment_centered"] = alignment(k1, k2, centered=True)
        self.history.append(record)
        self._write_csv(trainer)
        return record

    def _write_csv(self, trainer: L.Trainer) -> None:
        if self.csv_name is None:
            return
        path = Path(trainer.default_root_dir) / self.csv_name
        path.parent.mkdir(parents=True, exist_ok=True)
        fields = list(dict.fromkeys(key for record in self.history for key in record))
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=fields)
            writer.writeheader()
            writer.writerows(self.history)

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._measure(trainer, pl_module, trainer.current_epoch)  # before training (or where a resumed run starts)

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        record = self._measure(trainer, pl_module, trainer.current_epoch + 1)
        for key, value in (record or {}).items():
            if key != "epoch":
                pl_module.log(key, value, rank_zero_only=True)

    def final_metrics(self) -> dict[str, float]:
        """The alignments of the last measurement (of the epoch ``history[-1]["epoch"]``: the last epoch
        when ``every_n_epochs`` divides it), each key with the suffix ``_final``
        (``ntk/kernel_target_alignment_final``); empty before the first measurement."""
        if not self.history:
            return {}
        return {f"{key}_final": value for key, value in self.history[-1].items() if key != "epoch"}

    def state_dict(self) -> dict[str, Any]:
        return {"history": list(self.history)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.history = list(state_dict.get("history", []))
