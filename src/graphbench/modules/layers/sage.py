"""GraphSAGE (Hamilton et al., 2017, "Inductive Representation Learning on Large Graphs")."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor
from torch_geometric.nn import SAGEConv
from torch_geometric.utils import scatter

from graphbench.modules.layers.contract import Layer
from graphbench.modules.propagation import weighted_sum_at_dst

#: aggregators with a weighted form (``edge_weight``); any other ignores the weights
WEIGHTED_AGGRS: tuple[str, ...] = ("mean", "sum", "add")


class SAGELayer(Layer):
    r"""GraphSAGE with the mean aggregator (Hamilton et al., 2017, Alg. 1, the concatenation
    :math:`W[h_i \,\|\, \mathrm{mean}_j h_j]` written as two matrices):

    .. math::
        x_i' = W_1 x_i + W_2 \frac{1}{|N(i)|} \sum_{j \in N(i)} x_j + b,

    with an optional :math:`\ell_2` normalization of :math:`x_i'` (``normalize``). Nodes without
    in-neighbours aggregate zero. GraphSAGE has no use for edge features: ``edge_attr`` passes
    through unchanged. ``edge_index[1]`` is the receiving node ``i``.

    With ``edge_weight`` (``[E]``, :math:`w_{ji}` on the edge :math:`j \to i`; GraphSAINT's
    :math:`1/\alpha_{j,i}`) the aggregation is weighted: the mean becomes
    :math:`\sum_{j \in N(i)} w_{ji} x_j \,/\, \sum_{j \in N(i)} w_{ji}` (zero without in-neighbours)
    and ``aggr="sum"`` the sum :math:`\sum_{j \in N(i)} w_{ji} x_j`; all weights 1 give the unweighted
    layer. Under GraphSAINT, :math:`\sum_j w_{ji}` estimates node :math:`i`'s full-graph degree, so the
    weighted mean is the ratio estimate of the full-graph mean (and the weighted sum the unbiased
    estimate of the full-graph sum). Other aggregators (``max``, ...) have no weighted form and
    ignore ``edge_weight``."""

    uses_edge_attr = False
    uses_edge_weight = True

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int, aggr: str = "mean", normalize: bool = False) -> None:
        super().__init__()
        self.conv = SAGEConv(in_dim, out_dim, aggr=aggr, normalize=normalize)

    def reset_parameters(self) -> None:
        self.conv.reset_parameters()

    def forward(
        self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None, edge_weight: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        if edge_weight is None or self.conv.aggr not in WEIGHTED_AGGRS:
            return self.conv(x, edge_index), edge_attr
        src, dst = edge_index
        weight = edge_weight.to(x.dtype)
        aggregated = weighted_sum_at_dst(x.index_select(0, src), weight, dst, x.size(0))
        if self.conv.aggr == "mean":
            total = scatter(weight, dst, 0, x.size(0), reduce="sum")
            aggregated = aggregated / total.masked_fill(total == 0, 1).unsqueeze(-1)
        out = self.conv.lin_l(aggregated) + self.conv.lin_r(x)
        return (F.normalize(out, p=2.0, dim=-1) if self.conv.normalize else out), edge_attr
