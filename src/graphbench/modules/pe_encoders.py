r"""Encoders that map precomputed positional/structural encodings to node embeddings.

Each encoder reads attributes written by a transform of :mod:`graphbench.transforms`
from a PyG :class:`~torch_geometric.data.Batch` (or single
:class:`~torch_geometric.data.Data`) and returns a ``[N, out_dim]`` tensor that the
network **adds** to its node-feature embedding, or, for an encoder built with ``concat_dim``, a
``[N, concat_dim]`` tensor that the network **concatenates** to a ``hidden_dim - concat_dim``-wide
node-feature embedding (GraphGPS's ``Atom+RWSE``/``Atom+LapPE`` node encoders,
``graphgps/encoder/{kernel,laplace}_pos_encoder.py``, ``expand_x=False``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn
from torch_geometric.data import Data

from graphbench.modules.norms import MaskedBatchNorm1d


class LapPEEncoder(nn.Module):
    r"""Encodes Laplacian eigenvectors (:class:`~graphbench.transforms.lap_pe.LapPE`).

    * ``kind="linear"`` (Dwivedi et al., `"Benchmarking Graph Neural Networks"
      <https://arxiv.org/abs/2003.00982>`_): :math:`h_i = W u(i) + b` with
      :math:`u(i) \in \mathbb{R}^k` the node's eigenvector entries (zero-padded).
    * ``kind="deepset"`` (Rampášek et al., `"Recipe for a General, Powerful, Scalable
      Graph Transformer" <https://arxiv.org/abs/2205.12454>`_, DeepSet LapPE):
      :math:`h_i = \rho\big(\sum_{j \le k,\ \lambda_j \ne \mathrm{NaN}}
      \phi([u_j(i), \lambda_j])\big)` with :math:`\phi` a 2-layer MLP
      :math:`\mathbb{R}^2 \to \mathbb{R}^d` and :math:`\rho` linear; padded
      frequencies (eigenvalue NaN) are masked out of the sum.
    * ``kind="deepset"`` with ``concat_dim=c`` (GraphGPS's ``LapPENodeEncoder``, ``model: DeepSet``,
      ``layers: 2``, ``post_layers: 0``, ``dim_pe: c``): :math:`\mathrm{PE}_i = \sum_j
      \mathrm{ReLU}(W_2\, \mathrm{ReLU}(W_1 [u_j(i), \lambda_j] + b_1) + b_2)` with
      :math:`W_1 \in \mathbb{R}^{2c \times 2}`, :math:`W_2 \in \mathbb{R}^{c \times 2c}` and no
      :math:`\rho`, concatenated by the network.

    **Sign flip:** eigenvectors are defined up to sign, so in training mode (only) each
    eigenvector of **each graph** is multiplied by an independent random :math:`\pm 1`
    (per graph gives the same per-graph distribution as one sign per eigenvector per
    *mini-batch*, with more diversity); ``sign_flip_per="batch"`` draws one sign per
    eigenvector for the whole mini-batch, as Dwivedi et al. and GraphGPS's
    ``LapPENodeEncoder`` do. Evaluation is deterministic.

    Args:
        k (int): Number of eigenvectors per node (the transform's ``k``).
        out_dim (int): Output embedding size.
        kind (str): ``"linear"`` or ``"deepset"``. (default: ``"linear"``)
        sign_flip (bool): Random sign flips in training mode. (default: ``True``)
        sign_flip_per (str): ``"graph"`` or ``"batch"``: what one drawn sign covers. (default: ``"graph"``)
        eigen_attr (str): Eigenvector attribute. (default: ``"lap_pe"``)
        eigval_attr (str): Eigenvalue attribute. (default: ``"lap_eigval"``)
        concat_dim (int, optional): Width of a PE concatenated to the node embedding (``out_dim``
            is then not used); ``None`` adds an ``out_dim``-wide one. (default: ``None``)
    """

    KINDS: tuple[str, ...] = ("linear", "deepset")

    def __init__(
        self,
        k: int,
        out_dim: int,
        kind: str = "linear",
        sign_flip: bool = True,
        eigen_attr: str = "lap_pe",
        eigval_attr: str = "lap_eigval",
        concat_dim: int | None = None,
        sign_flip_per: str = "graph",
    ) -> None:
        super().__init__()
        if kind not in self.KINDS:
            raise ValueError(f"Unknown LapPEEncoder kind {kind!r}; valid kinds: {list(self.KINDS)}")
        if sign_flip_per not in ("graph", "batch"):
            raise ValueError(f"Unknown LapPEEncoder sign_flip_per {sign_flip_per!r}; valid: ['graph', 'batch']")
        self.sign_flip_per = sign_flip_per
        self.k, self.kind, self.sign_flip, self.concat_dim = k, kind, sign_flip, concat_dim
        self.out_dim = out_dim if concat_dim is None else concat_dim
        self.eigen_attr, self.eigval_attr = eigen_attr, eigval_attr
        self.rho: nn.Module = nn.Identity()
        if kind == "linear":
            self.linear = nn.Linear(k, self.out_dim)
        elif concat_dim is None:
            self.phi = nn.Sequential(nn.Linear(2, out_dim), nn.ReLU(), nn.Linear(out_dim, out_dim), nn.ReLU())
            self.rho = nn.Linear(out_dim, out_dim)
        else:
            self.phi = nn.Sequential(nn.Linear(2, 2 * concat_dim), nn.ReLU(), nn.Linear(2 * concat_dim, concat_dim), nn.ReLU())
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Linear):
                module.reset_parameters()

    def forward(self, batch: Data) -> Tensor:
        vecs = _get(batch, self.eigen_attr, self.k, "LapPE")
        vecs = torch.nan_to_num(vecs, nan=0.0)
        if self.training and self.sign_flip and self.sign_flip_per == "batch":
            signs = torch.randint(0, 2, (1, self.k), device=vecs.device) * 2 - 1
            vecs = vecs * signs.to(vecs.dtype)
        elif self.training and self.sign_flip:
            graph = _graph_index(batch, vecs)
            # a batch's own graph count (a padded batch's included) reads nothing back from the device
            num_graphs: int | None = getattr(batch, "num_graphs", None)
            if num_graphs is None:
                num_graphs = int(graph.max()) + 1 if graph.numel() else 0
            signs = torch.randint(0, 2, (num_graphs, self.k), device=vecs.device) * 2 - 1
            vecs = vecs * signs[graph].to(vecs.dtype)
        if self.kind == "linear":
            return self.linear(vecs)
        vals = _get(batch, self.eigval_attr, self.k, "LapPE")
        padded = torch.isnan(vals)
        pairs = torch.stack([vecs, vals.masked_fill(padded, 0.0)], dim=-1)  # [N, k, 2]
        hidden = self.phi(pairs).masked_fill(padded.unsqueeze(-1), 0.0)
        return self.rho(hidden.sum(dim=1))

    def extra_repr(self) -> str:
        return f"k={self.k}, out_dim={self.out_dim}, kind={self.kind!r}, sign_flip={self.sign_flip}, concat_dim={self.concat_dim}, sign_flip_per={self.sign_flip_per!r}"


class RWSEEncoder(nn.Module):
    r"""Encodes random-walk return probabilities (:class:`~graphbench.transforms.rwse.RWSE`)
    as in GraphGPS (Rampášek et al., 2022): :math:`h_i = W\,\mathrm{BN}(p_i) + b`,
    with :math:`p_i \in \mathbb{R}^k` the raw RWSE and BN a
    :class:`~torch.nn.BatchNorm1d` over the :math:`k` steps (over a padded batch's real nodes only,
    ``node_mask``: :class:`~graphbench.modules.norms.MaskedBatchNorm1d`). With ``concat_dim=c``,
    :math:`W \in \mathbb{R}^{c \times k}` and the network concatenates :math:`h_i` to the node
    embedding (GraphGPS's ``KernelPENodeEncoder``, ``model: Linear``, ``raw_norm_type: BatchNorm``,
    ``dim_pe: c``).

    Args:
        k (int): Number of random-walk steps (the transform's ``k``).
        out_dim (int): Output embedding size.
        attr (str): RWSE attribute. (default: ``"rwse"``)
        concat_dim (int, optional): Width of a PE concatenated to the node embedding (``out_dim``
            is then not used); ``None`` adds an ``out_dim``-wide one. (default: ``None``)
    """

    def __init__(self, k: int, out_dim: int, attr: str = "rwse", concat_dim: int | None = None) -> None:
        super().__init__()
        self.k, self.attr, self.concat_dim = k, attr, concat_dim
        self.out_dim = out_dim if concat_dim is None else concat_dim
        self.norm = MaskedBatchNorm1d(k)
        self.linear = nn.Linear(k, self.out_dim)

    def reset_parameters(self) -> None:
        self.norm.reset_parameters()
        self.linear.reset_parameters()

    def forward(self, batch: Data) -> Tensor:
        return self.linear(self.norm(_get(batch, self.attr, self.k, "RWSE"), getattr(batch, "node_mask", None)))

    def extra_repr(self) -> str:
        return f"k={self.k}, out_dim={self.out_dim}, concat_dim={self.concat_dim}"


class SumPEEncoder(nn.Module):
    r"""Sum of several PE encoders: :math:`h_i = \sum_e \mathrm{enc}_e(\text{batch})_i`.

    Args:
        encoders (Sequence): Encoder modules, or factories called as
            ``factory(out_dim=out_dim)`` (e.g. Hydra partials), in which case
            ``out_dim`` is required.
        out_dim (int, optional): Output size passed to the factories.
    """

    def __init__(
        self,
        encoders: Sequence[nn.Module | Callable[..., nn.Module]],
        out_dim: int | None = None,
    ) -> None:
        super().__init__()
        built: list[nn.Module] = []
        for encoder in encoders:
            if not isinstance(encoder, nn.Module):
                if out_dim is None:
                    raise ValueError("SumPEEncoder needs out_dim to build encoders from factories")
                encoder = encoder(out_dim=out_dim)
            built.append(encoder)
        if not built:
            raise ValueError("SumPEEncoder needs at least one encoder")
        dims = {d for d in (getattr(e, "out_dim", None) for e in built) if d is not None}
        if out_dim is not None:
            dims.add(out_dim)
        if len(dims) > 1:
            raise ValueError(f"SumPEEncoder encoders disagree on out_dim: {sorted(dims)}")
        if any(getattr(e, "concat_dim", None) is not None for e in built):
            raise ValueError("SumPEEncoder adds its encoders' outputs: build them without concat_dim")
        self.encoders = nn.ModuleList(built)
        self.out_dim: int | None = dims.pop() if dims else None
        self.concat_dim: int | None = None

    def reset_parameters(self) -> None:
        for encoder in self.encoders:
            encoder.reset_parameters()  # type: ignore[operator]

    def forward(self, batch: Data) -> Tensor:
        out = self.encoders[0](batch)
        for encoder in self.encoders[1:]:
            out = out + encoder(batch)
        return out


def _get(batch: Data, attr: str, k: int, transform: str) -> Tensor:
    value = batch.get(attr) if hasattr(batch, "get") else getattr(batch, attr, None)
    if value is None:
        raise ValueError(
            f"Batch has no attribute {attr!r}; precompute it with the {transform} "
            f"transform (config group pe=...) before using this encoder."
        )
    if value.dim() != 2 or value.size(1) != k:
        raise ValueError(f"Expected {attr!r} of shape [N, {k}], got {tuple(value.shape)}")
    return value


def _graph_index(batch: Data, like: Tensor) -> Tensor:
    graph = getattr(batch, "batch", None)
    if graph is None:
        return torch.zeros(like.size(0), dtype=torch.long, device=like.device)
    return graph
