"""Graph convolution (Kipf & Welling, 2017)."""

from __future__ import annotations

from torch import Tensor
from torch_geometric.nn import GCNConv

from graphbench.modules.layers.contract import Layer, gcn_product
from graphbench.modules.propagation import EdgePlan


class GCNLayer(Layer):
    r""":math:`X' = \hat D^{-1/2} \hat A \hat D^{-1/2} X W + b` with :math:`\hat A = A + I` and
    :math:`\hat D_{ii} = \sum_j \hat A_{ij}`. GCN has no use for edge features: ``edge_attr`` passes
    through unchanged.

    With ``edge_weight`` (``[E]``; GraphSAINT's aggregator normalization :math:`1/\alpha_{u,v}`)
    :math:`A` is weighted, :math:`A_{ij} = w_{ji}` for the edge :math:`j \to i`, inside the
    normalization, exactly as PyG's ``GCNConv(x, edge_index, edge_weight)``; without it every
    weight is 1.

    The parameters are those of PyG's :class:`~torch_geometric.nn.GCNConv` (``conv.lin``,
    ``conv.bias``). With ``sparse=True`` the propagation is a CSR product with the normalized
    adjacency of the :class:`~graphbench.modules.propagation.EdgePlan` the network builds once per
    batch (normalization computed once for all layers; the network builds the plan with the same
    ``edge_weight``) after ``conv.lin``;
    ``sparse=False`` calls ``GCNConv`` itself, which renormalizes and scatters in every layer. Both
    give the same result up to float rounding.

    ``improved=True``: :math:`\hat A = A + 2I` (PyG's ``GCNConv(improved=True)``; the IGB code's GCN on
    CiteSeer), self-loops of weight 2, on both paths. Without edge weights PyG 2.8.1's ``gcn_norm``
    drops the fill value 2, so both paths give it unit edge weights.
    """

    uses_edge_attr = False
    uses_plan = True
    uses_edge_weight = True

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int, sparse: bool = True, improved: bool = False) -> None:
        super().__init__()
        self.conv = GCNConv(in_dim, out_dim, improved=improved)
        self.sparse = sparse
        self.self_loop_weight = 2.0 if improved else 1.0

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_attr: Tensor | None,
        plan: EdgePlan | None = None,
        edge_weight: Tensor | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        if not self.sparse:
            if self.conv.improved and edge_weight is None:
                # PyG 2.8.1's gcn_norm drops the self-loops' weight 2 when it is given no edge weights (it
                # normalizes A + I then): unit weights give A + 2I
                edge_weight = x.new_ones(edge_index.size(1))
            return self.conv(x, edge_index, edge_weight), edge_attr
        plan = self.gcn_plan_for(plan, edge_index, x.size(0), edge_weight)
        out = gcn_product(plan, self.conv.lin(x), self.self_loop_weight)
        return (out if self.conv.bias is None else out + self.conv.bias), edge_attr
