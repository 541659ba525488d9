"""The GNN: input encoders (+ PE) -> message-passing stack -> pooling -> head."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn
from torch_geometric.data import Batch
from torch_geometric.nn import global_add_pool, global_max_pool, global_mean_pool

from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.activations import make_activation
from graphbench.modules.encoders import make_feature_encoder
from graphbench.modules.layers.contract import Layer, check_layer
from graphbench.modules.propagation import EdgePlan, PlanMemo
from graphbench.vocabulary.errors import ArgumentError

POOLINGS: dict[str, Callable[..., Tensor]] = {"mean": global_mean_pool, "add": global_add_pool, "max": global_max_pool}

LayerFactory = Callable[..., Layer]

#: how the network wraps each layer that is not self-contained (see :class:`GraphNetwork`)
BLOCKS: tuple[str, ...] = ("full", "residual")
#: when the network builds an edge encoder (see :class:`GraphNetwork`)
EDGE_ENCODERS: tuple[str, ...] = ("auto", "always")
#: which layers' embeddings the head reads (see :class:`GraphNetwork`)
READOUT_LAYERS: tuple[str, ...] = ("last", "all")


class GraphNetwork(nn.Module):
    r"""A stack of ``num_layers`` message-passing blocks of constant width ``hidden_dim``.

    Each block computes :math:`h^{(l+1)} = h^{(l)} + \mathrm{Dropout}(\sigma(\mathrm{Norm}(\mathrm{Layer}(h^{(l)}))))`
    (the residual term only when ``residual``), the block structure of Benchmarking GNNs and GraphGPS;
    layers that update edge features get the same treatment for edges with their own norms.
    ``block="residual"`` wraps each layer in the residual connection only,
    :math:`h^{(l+1)} = h^{(l)} + \mathrm{Layer}(h^{(l)})`: no norm, activation or dropout outside the layer, as
    ``GINEConvLayer`` of toenshoff/LRGB (``graphgps/layer/gine_conv_layer.py``), whose dropout sits inside
    its MLP; it needs ``normalization=none``.
    Every layer is a :class:`~graphbench.modules.layers.contract.Layer` (refused otherwise) and the
    network reads its contract: ``updates_edges``, ``uses_edge_attr`` (when no layer reads edge
    features they receive ``edge_attr=None``, and there is no edge encoder unless ``edge_encoder="always"``
    builds the dataset's, as GraphGPS's feature encoder does whatever the layers read: its parameters
    are counted and never computed or trained), ``self_contained`` (GPS,
    GCNII: own norms, residuals and dropout, used as is), ``needs_batch`` (``batch=``, the graph
    index), ``uses_plan`` (``plan=``, the batch's :class:`~graphbench.modules.propagation.EdgePlan`,
    built once per forward pass for all of them, once per run when every batch is the same graph:
    :class:`~graphbench.modules.propagation.PlanMemo`) and ``uses_edge_weight``: a batch's
    ``edge_weight`` (``[E]``; GraphSAINT's aggregator normalization :math:`1/\alpha_{u,v}`) goes to
    those layers as ``edge_weight=`` and into the plan (GCN's normalization); the other layers ignore
    it. A batch without one runs unweighted.
    Node embeddings start as the encoded input features (after ``input_dropout`` when they are dense)
    plus the encoded positional encoding; a PE encoder with a ``concat_dim`` (GraphGPS's
    ``Atom+RWSE``/``Atom+LapPE`` node encoders) is concatenated instead,
    :math:`h^{(0)}_i = [\mathrm{Enc}(x_i) \,\|\, \mathrm{PE}_i]`, the feature encoder then being
    ``hidden_dim - concat_dim`` wide.
    Graph-level tasks pool the node embeddings (``pooling``); node-level tasks do not. The ``head``
    maps the result to ``info.num_outputs``. ``readout_layers="all"`` gives every embedding, the
    input embedding's included, a head of its own and sums their outputs,
    :math:`\hat y = \sum_{l=0}^{L} \mathrm{head}_l(\mathrm{pool}(h^{(l)}))`: the readout of Xu et al.'s
    GIN code (``models/graphcnn.py``) and of Benchmarking GNNs' ``gin_net.py`` (with ``head=linear``). ``encode_inputs=False`` feeds raw dense features to the
    first layer and ``last_layer_outputs=True`` makes the last layer the predictor (no head): together
    they express Kipf & Welling's (2017) two-layer GCN exactly.
    """

    def __init__(
        self,
        *,
        info: DatasetInfo,
        layer: LayerFactory,
        head: Callable[..., nn.Module],
        norm: Callable[[int], nn.Module],
        hidden_dim: int,
        num_layers: int,
        dropout: float = 0.0,
        activation: str = "relu",
        residual: bool = True,
        pooling: str = "mean",
        pe_encoder: Callable[..., nn.Module] | None = None,
        input_dropout: float = 0.0,
        encode_inputs: bool = True,
        last_layer_outputs: bool = False,
        block: str = "full",
        edge_encoder: str = "auto",
        readout_layers: str = "last",
    ) -> None:
        super().__init__()
        if pooling not in POOLINGS:
            raise ArgumentError(f"pooling={pooling!r} is not one of {sorted(POOLINGS)}")
        if block not in BLOCKS:
            raise ArgumentError(f"block={block!r} is not one of {list(BLOCKS)}")
        if num_layers < 0:
            raise ArgumentError(f"num_layers={num_layers} must be >= 0")
        if edge_encoder not in EDGE_ENCODERS:
            raise ArgumentError(f"edge_encoder={edge_encoder!r} is not one of {list(EDGE_ENCODERS)}")
        if readout_layers not in READOUT_LAYERS:
            raise ArgumentError(f"readout_layers={readout_layers!r} is not one of {list(READOUT_LAYERS)}")
        if readout_layers == "all" and (last_layer_outputs or info.level == "link"):
            raise ArgumentError("readout_layers=all needs a head per layer: not with last_layer_outputs or a link task")
        self.level = info.level
        self.residual = residual
        self.pool = POOLINGS[pooling]
        if not encode_inputs and (info.node_features.kind != "dense" or pe_encoder is not None or num_layers < 1):
            raise ArgumentError("encode_inputs=false needs dense node features, no pe_encoder and at least one layer")
        if last_layer_outputs and num_layers < 1:
            raise ArgumentError("last_layer_outputs=true needs at least one layer")
        in_dims, out_dims = [hidden_dim] * num_layers, [hidden_dim] * num_layers
        if not encode_inputs:
            in_dims[0] = info.node_features.dim  # the first layer reads the raw features
        if last_layer_outputs:
            out_dims[-1] = info.num_outputs  # the last layer predicts; no head
        self.last_layer_outputs = last_layer_outputs
        self.block = block
        self.pe_encoder = pe_encoder(out_dim=hidden_dim) if pe_encoder is not None else None
        self.pe_concat_dim: int | None = getattr(self.pe_encoder, "concat_dim", None)
        feature_dim = hidden_dim - (self.pe_concat_dim or 0)
        if feature_dim < 1:
            raise ArgumentError(f"hidden_dim={hidden_dim} leaves no room beside the {self.pe_concat_dim} channels of pe_encoder")
        self.node_encoder = make_feature_encoder(info.node_features, feature_dim) if encode_inputs else nn.Identity()
        try:
            made = [layer(in_dim=i, out_dim=o, edge_dim=hidden_dim) for i, o in zip(in_dims, out_dims)]
        except ArgumentError as exc:  # an argument of the layer node
            raise exc.under("layer") from None
        built = [check_layer(lay) for lay in made]
        self.layers = nn.ModuleList(built)  # Layers (checked): the loops below read their contract
        self.reads_edge_features = any(lay.uses_edge_attr for lay in built)
        # auto: layers that ignore edge features (uses_edge_attr = False) get no edge encoder, whose
        # parameters would count against the budget and get no gradient; always: built all the same
        # (GraphGPS's ``dataset.edge_encoder: True`` under a GCN), never computed when no layer reads it
        self.edge_encoder = (
            make_feature_encoder(info.edge_features or FeatureSpec("constant"), hidden_dim)
            if self.reads_edge_features or (edge_encoder == "always" and info.edge_features is not None)
            else None
        )
        if block == "residual" and getattr(norm(hidden_dim), "kind", "none") != "none":
            raise ArgumentError("block='residual' puts no norm around the layers: its norm must be of kind none")
        self.node_norms = nn.ModuleList(nn.Identity() if lay.self_contained else norm(hidden_dim) for lay in built)
        self.normed_edges = any(lay.updates_edges and not lay.self_contained for lay in built)
        self.edge_norms = nn.ModuleList(
            norm(hidden_dim) if lay.updates_edges and not lay.self_contained else nn.Identity() for lay in built
        )
        self.input_dropout = nn.Dropout(input_dropout)  # on dense input features (Kipf & Welling 2017)
        self.act = make_activation(activation)
        self.dropout = nn.Dropout(dropout)
        self.readout_layers = readout_layers
        self.head = None if last_layer_outputs else head(in_dim=hidden_dim, out_dim=info.num_outputs)
        # readout_layers=all: self.head reads the input embedding h^(0), layer_heads[l-1] reads h^(l)
        self.layer_heads = nn.ModuleList(
            head(in_dim=hidden_dim, out_dim=info.num_outputs) for _ in range(num_layers if readout_layers == "all" else 0)
        )
        self.plans = PlanMemo()

    def _block(self, h: Tensor, h_new: Tensor, norm: nn.Module, batch: Tensor | None, mask: Tensor | None) -> Tensor:
        if self.block == "full":
            normed = norm(h_new, batch) if mask is None else norm(h_new, batch, mask)
            h_new = self.dropout(self.act(normed))
        return h + h_new if self.residual and h.shape == h_new.shape else h_new

    def embed(self, data: Batch) -> Tensor:
        """Node embeddings after the message-passing stack."""
        return self.embed_layers(data)[-1]

    def embed_layers(self, data: Batch) -> list[Tensor]:
        r"""Node embeddings :math:`[h^{(0)}, \dots, h^{(L)}]` of the input and of every block with
        ``readout_layers="all"``; else the last one alone (the last layer's prediction with
        ``last_layer_outputs``)."""
        batch = getattr(data, "batch", None)
        x = data.x
        h = self.node_encoder(self.input_dropout(x) if x.is_floating_point() else x)
        if self.pe_encoder is not None:
            pe = self.pe_encoder(data)
            h = h + pe if self.pe_concat_dim is None else torch.cat([h, pe], dim=-1)
        e = None
        if self.edge_encoder is not None and self.reads_edge_features:
            edge_attr = data.edge_attr if data.edge_attr is not None else data.edge_index.new_zeros(data.edge_index.size(1), 1)
            e = self.edge_encoder(edge_attr)
        # the edges' graph index, for the norms of the layers that update edges
        edge_batch = batch[data.edge_index[0]] if batch is not None and self.normed_edges else None
        edge_weight: Tensor | None = getattr(data, "edge_weight", None)
        # a padded batch's real rows (graphbench.data.store.padding), for the norms' batch statistics
        node_mask: Tensor | None = getattr(data, "node_mask", None)
        edge_mask: Tensor | None = getattr(data, "edge_mask", None)
        # the batch's plan, shared by every layer: GCN's normalized adjacency is built on first use
        # instead of layer by layer, and once per run for a full-batch graph (PlanMemo)
        plan = None
        if any(layer.uses_plan for layer in self.layers):
            # a compiled forward builds its plan inside the graph: the memo's identity and version
            # checks cannot be traced
            make_plan = EdgePlan if torch.compiler.is_compiling() else self.plans.plan
            plan = make_plan(data.edge_index, h.size(0), edge_weight)
        every = self.readout_layers == "all"
        hidden = [h]
        for index, (layer, node_norm, edge_norm) in enumerate(zip(self.layers, self.node_norms, self.edge_norms)):
            extra: dict[str, object] = {"batch": batch} if layer.needs_batch else {}
            if layer.uses_plan:
                extra["plan"] = plan
            if edge_weight is not None and layer.uses_edge_weight:
                extra["edge_weight"] = edge_weight
            h_new, e_new = layer(h, data.edge_index, e, **extra)
            if self.last_layer_outputs and index == len(self.layers) - 1:
                return [h_new]  # the prediction itself: no norm, activation, dropout or residual
            if layer.self_contained:  # it applied its own norms, residuals and dropout
                h, e = h_new, e_new
            else:
                h = self._block(h, h_new, node_norm, batch, node_mask)
                if layer.updates_edges:
                    e = self._block(e, e_new, edge_norm, edge_batch, edge_mask)
            hidden = [*hidden, h] if every else [h]
        return hidden

    def forward(self, data: Batch) -> Tensor:
        """Graph level: head(pool(h)) per graph. Node level: head(h) per node. Link level: the node
        embeddings ``h`` themselves; the link task scores node pairs with ``self.head``."""
        hidden = self.embed_layers(data)
        if self.level == "link":
            return hidden[-1]
        if self.level == "graph":
            batch = getattr(data, "batch", None)
            if batch is None:
                batch = torch.zeros(hidden[-1].size(0), dtype=torch.long, device=hidden[-1].device)
                num_graphs = 1
            else:
                # the batch's own count, so that pooling need not read batch.max() back from the device
                num_graphs = getattr(data, "num_graphs", None)
            hidden = [self.pool(h, batch, num_graphs) for h in hidden]
        if self.head is None:
            return hidden[-1]
        if self.readout_layers == "last":
            return self.head(hidden[-1])
        out = self.head(hidden[0])
        for layer_head, h in zip(self.layer_heads, hidden[1:]):
            out = out + layer_head(h)
        return out


def count_parameters(module: nn.Module) -> int:
    """Exact number of trainable parameters."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
