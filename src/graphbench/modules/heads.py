"""Prediction heads: pooled graph (or node) embeddings -> task outputs."""

from __future__ import annotations

from torch import Tensor, nn
from torch.nn import functional as F

from graphbench.modules.activations import make_activation
from graphbench.vocabulary.errors import ArgumentError


class L2Normalize(nn.Module):
    r""":math:`x_i \leftarrow x_i / \max(\lVert x_i \rVert_2, 10^{-12})` per row, as
    :func:`torch.nn.functional.normalize` (GraphGym's ``has_l2norm``)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.normalize(x, p=2.0, dim=-1)


class MLPHead(nn.Module):
    r"""An MLP of ``num_layers`` linear layers: ``num_layers - 1`` hidden layers of width ``in_dim``,
    then a linear output layer. Three orders of the hidden layer's parts:

    * default: Linear -> activation -> Dropout;
    * ``dropout_first=True``: Dropout before every linear map, the output layer's included (so on the
      pooled embedding itself), Dropout -> Linear -> activation per hidden layer, then Dropout ->
      Linear: ``MLPGraphHead`` (``mlp_graph``) of GraphGPS and toenshoff/LRGB
      (``graphgps/head/mlp_graph.py``);
    * ``l2_normalize=True``: Linear -> activation -> Dropout -> L2 normalization per row:
      ``GeneralLayer`` of GraphGym's ``MLP``, whose fresh ``LayerConfig`` in the LRGB node and edge
      heads (``graphgps/head/inductive_{node,edge}.py``) has ``act='relu'``, ``dropout=0``,
      ``has_l2norm=True`` and no BatchNorm (PyG 2.3.0, ``graphgym/models/layer.py``).

    ``num_layers=1`` is a linear head (after Dropout with ``dropout_first``). Tönshoff et al. (2023,
    "Where Did the Gap Go?") found that head depth explains much of the gap between MPNNs and graph
    transformers on Peptides-func.
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        num_layers: int,
        activation: str = "relu",
        dropout: float = 0.0,
        dropout_first: bool = False,
        l2_normalize: bool = False,
    ) -> None:
        super().__init__()
        if num_layers < 1:
            raise ArgumentError(f"num_layers={num_layers} must be >= 1")
        if dropout_first and l2_normalize:
            raise ArgumentError("dropout_first=true and l2_normalize=true are two heads' orders: set one of them")
        layers: list[nn.Module] = []
        for _ in range(num_layers - 1):
            if dropout_first:
                layers += [nn.Dropout(dropout), nn.Linear(in_dim, in_dim), make_activation(activation)]
            else:
                layers += [nn.Linear(in_dim, in_dim), make_activation(activation), nn.Dropout(dropout)]
                if l2_normalize:
                    layers.append(L2Normalize())
        if dropout_first:
            layers.append(nn.Dropout(dropout))
        layers.append(nn.Linear(in_dim, out_dim))
        self.mlp = nn.Sequential(*layers)

    def reset_parameters(self) -> None:
        for module in self.mlp:
            if isinstance(module, nn.Linear):
                module.reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        return self.mlp(x)


class DotProductHead(nn.Module):
    r"""Scores a node pair by the dot product of its transformed embeddings,
    :math:`s_{uv} = \langle g(h_u), g(h_v) \rangle` with :math:`g` an :class:`MLPHead` of ``num_layers``
    layers from ``in_dim`` to ``in_dim`` (GraphGym's MLP order: ``l2_normalize=True``, ReLU): the
    ``inductive_edge`` head of toenshoff/LRGB with ``edge_decoding: dot``
    (``graphgps/head/inductive_edge.py``), whose ``layers_post_mp: 1`` makes :math:`g` one Linear map.
    A link head: :func:`score_pairs` calls :meth:`score_pairs`; ``out_dim`` must be 1.
    """

    def __init__(self, in_dim: int, out_dim: int, num_layers: int, activation: str = "relu", l2_normalize: bool = True) -> None:
        super().__init__()
        if out_dim != 1:
            raise ValueError(f"head=dot scores binary links: out_dim must be 1, got {out_dim}")
        self.node_map = MLPHead(in_dim, in_dim, num_layers, activation=activation, l2_normalize=l2_normalize)

    def reset_parameters(self) -> None:
        self.node_map.reset_parameters()

    def score_pairs(self, h_u: Tensor, h_v: Tensor) -> Tensor:
        """:math:`\\langle g(h_u), g(h_v) \\rangle` over the last dimension (broadcast), shape ``[..., 1]``."""
        return (self.node_map(h_u) * self.node_map(h_v)).sum(dim=-1, keepdim=True)

    def forward(self, x: Tensor) -> Tensor:
        raise TypeError("DotProductHead scores node pairs (a link head): call score_pairs(head, h_u, h_v)")


def score_pairs(head: nn.Module, h_u: Tensor, h_v: Tensor) -> Tensor:
    r"""A link head's scores of the pairs :math:`(u, v)` (broadcast over leading dimensions): the
    :class:`DotProductHead`'s :meth:`~DotProductHead.score_pairs`, otherwise
    :math:`\mathrm{head}(h_u \odot h_v)`."""
    if isinstance(head, DotProductHead):
        return head.score_pairs(h_u, h_v)
    return head(h_u * h_v)
