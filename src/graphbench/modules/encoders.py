"""Input encoders: raw node/edge features -> hidden vectors."""

from __future__ import annotations

import torch
from ogb.graphproppred.mol_encoder import AtomEncoder, BondEncoder
from torch import Tensor, nn

from graphbench.data.info import FeatureSpec


class CategoricalEncoder(nn.Module):
    r"""Sum of one embedding table per categorical column: :math:`h = \sum_j E_j[x_j]`."""

    def __init__(self, cardinalities: tuple[int, ...], out_dim: int) -> None:
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(c, out_dim) for c in cardinalities)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for table in self.tables:
            nn.init.xavier_uniform_(table.weight)

    def forward(self, x: Tensor) -> Tensor:
        x = x.view(x.size(0), -1)
        return sum(table(x[:, j]) for j, table in enumerate(self.tables))


class ConstantEncoder(nn.Module):
    """One learned vector for every node (or edge): for graphs without informative features."""

    def __init__(self, out_dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(1, out_dim))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.normal_(self.weight, std=1.0)

    def forward(self, x: Tensor) -> Tensor:
        return self.weight.expand(x.size(0), -1)


def make_feature_encoder(spec: FeatureSpec, out_dim: int) -> nn.Module:
    """The encoder that fits a dataset's feature kind (see :class:`FeatureSpec`)."""
    if spec.kind == "atom":
        return AtomEncoder(out_dim)
    if spec.kind == "bond":
        return BondEncoder(out_dim)
    if spec.kind == "dense":
        return nn.Linear(spec.dim, out_dim)
    if spec.kind == "categorical":
        return CategoricalEncoder(spec.cardinalities, out_dim)
    if spec.kind == "constant":
        return ConstantEncoder(out_dim)
    raise ValueError(f"unknown feature kind {spec.kind!r}; valid: atom, bond, dense, categorical, constant")
