"""The LightningModule of link-level tasks: score node pairs from node embeddings."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import Tensor, nn
from torch.nn import functional as F
from torch.optim import Optimizer
from torch_geometric.data import Batch

from graphbench.data.info import DatasetInfo
from graphbench.metrics.mrr import link_ranks
from graphbench.modules.heads import score_pairs
from graphbench.modules.losses import pos_neg_bce
from graphbench.modules.schedulers import SchedulerSpec
from graphbench.modules.task_module import GraphTaskModule
from graphbench.vocabulary.errors import ArgumentError

#: how pairs are trained and evaluated (see :class:`LinkTaskModule`)
PROTOCOLS: tuple[str, ...] = ("classification", "hits", "ranking")


#: redraws of an invalid sampled negative before it is dropped (LRGB's ``tries_left``)
RESAMPLE_TRIES: int = 10


def invalid_pairs(keys: Tensor, positives: Tensor) -> Tensor:
    """Which of the pair ``keys`` (``head * num_nodes + tail``) are known positives, or repeat a key that
    comes earlier in ``keys`` (the first of equal keys is valid)."""
    sorted_keys, order = torch.sort(keys, stable=True)  # fixed-size outputs: no host sync, unlike torch.unique
    repeats = torch.zeros_like(keys, dtype=torch.bool)
    repeats[1:] = sorted_keys[1:] == sorted_keys[:-1]
    return torch.isin(keys, positives) | torch.empty_like(repeats).scatter_(0, order, repeats)


class LinkTaskModule(GraphTaskModule):
    r"""Link prediction and edge classification. The network returns node embeddings :math:`h`; a pair
    :math:`(u, v)` is scored by the network's head, :math:`s_{uv} = \mathrm{head}(h_u \odot h_v)`, or
    :math:`\langle g(h_u), g(h_v) \rangle` with ``head=dot``
    (:func:`~graphbench.modules.heads.score_pairs`).
    Batches carry the labelled pairs as ``edge_label_index`` (+ ``edge_label``, ``edge_label_id``). The
    dataset's config chooses the ``protocol`` (``dataset.module.protocol``):

    * ``classification`` (edge classification, TSP): every labelled pair is scored; the configured
      ``loss`` (class-balanced BCE for TSP).
    * ``hits`` (OGB, one graph): training pairs are positives, ``num_negatives`` uniformly random node
      pairs per positive are the negatives; evaluation scores the split's positive and negative pairs.
    * ``ranking`` (PCQM-Contact, many graphs): training samples ``num_negatives`` random tails in the head's
      graph per positive (LRGB's structured negative sampling); evaluation ranks every node of the graph
      as a candidate tail (raw, filtered, extended-filtered MRR, Hits@1/3/10), the loss being the BCE
      over all those candidates.

    Logs and keeps the same names as :class:`GraphTaskModule`; every value of a multi-valued metric is
    logged as ``{split}/{name}``. ``test_step`` returns the scores of the labelled (for ``ranking``:
    positive) test pairs, their labels and ids. ``hits`` and ``ranking`` train with OGB's
    positive-vs-negative BCE (:func:`~graphbench.modules.losses.pos_neg_bce`); ``ranking`` with a
    ``loss`` trains with it over all sampled pairs together (:meth:`sampled_pairs_loss`).
    """

    def __init__(
        self,
        network: nn.Module,
        info: DatasetInfo,
        optimizer: Callable[[Iterable[nn.Parameter]], Optimizer],
        scheduler: Callable[..., SchedulerSpec] | None = None,
        *,
        loss: Callable[[Tensor, Tensor], Tensor] | None,
        protocol: str,
        num_negatives: int = 1,
        score_chunk: int = 65536,
        config: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(network, info, optimizer, scheduler, loss=loss, config=config)
        if protocol not in PROTOCOLS:
            raise ArgumentError(f"protocol={protocol!r} is not one of {list(PROTOCOLS)}")
        if not isinstance(num_negatives, int) or num_negatives < 0:
            raise ArgumentError(f"num_negatives={num_negatives!r} must be a non-negative integer")
        if protocol == "classification" and loss is None:
            raise ArgumentError("protocol=classification needs a loss (e.g. loss={_target_: torch.nn.BCEWithLogitsLoss})")
        self.protocol = protocol
        self.num_negatives = num_negatives
        self.score_chunk = score_chunk
        self._test_seen = 0

    def score(self, h: Tensor, pairs: Tensor) -> Tensor:
        """Scores (logits) of the pairs ``[2, M]``, computed in chunks."""
        head = self.network.head
        parts = [
            score_pairs(head, h[pairs[0, i : i + self.score_chunk]], h[pairs[1, i : i + self.score_chunk]]).view(-1)
            for i in range(0, pairs.size(1), self.score_chunk)
        ]
        return torch.cat(parts) if parts else h.new_zeros(0)

    def sampled_pairs_loss(self, pos: Tensor, neg: Tensor) -> Tensor:
        r"""The ``ranking`` protocol's training loss over positive scores :math:`s^+` and sampled negative
        scores :math:`s^-`: :func:`~graphbench.modules.losses.pos_neg_bce` without a configured loss;
        with one (``dataset.module.loss``, e.g. ``torch.nn.BCEWithLogitsLoss``), that loss over all the
        labelled pairs together, :math:`\ell([s^+, s^-], [1, 0])` (GraphGPS's binary cross-entropy over
        the positives and the sampled negatives of the batch)."""
        if self.loss_fn is None:
            return pos_neg_bce(pos, neg)
        return self.loss_fn(torch.cat([pos, neg]), torch.cat([torch.ones_like(pos), torch.zeros_like(neg)]))

    def _graph_layout(self, batch: Batch, num_nodes: int, device: torch.device) -> tuple[Tensor, Tensor]:
        node_graph = (
            batch.batch if getattr(batch, "batch", None) is not None else torch.zeros(num_nodes, dtype=torch.long, device=device)
        )
        ptr = batch.ptr if getattr(batch, "ptr", None) is not None else torch.tensor([0, num_nodes], device=device)
        return node_graph, ptr

    def sample_negatives(self, batch: Batch, pos: Tensor, num_nodes: int) -> Tensor:
        """``num_negatives`` negatives per positive: uniformly random pairs (hits), or the positive's head
        with a uniformly random node of its graph (ranking).

        Ranking follows LRGB's ``custom_structured_negative_sampling`` (vijaydwivedi75/lrgb@2410e9e,
        graphgps/loader/dataset/pcqm4mv2_contact.py): a tail that makes a known positive, or a pair drawn
        earlier in the batch, is drawn again, :data:`RESAMPLE_TRIES` times at most, and a pair still
        invalid after that is dropped. Every round redraws the invalid tails only, with no host sync
        (the rounds run whether or not anything is left to redraw)."""
        k = self.num_negatives
        if k == 0 or pos.size(1) == 0:
            return pos.new_zeros(2, 0)
        if self.protocol == "hits":
            return torch.randint(0, num_nodes, (2, pos.size(1) * k), device=pos.device)
        node_graph, ptr = self._graph_layout(batch, num_nodes, pos.device)
        heads = pos[0].repeat_interleave(k)
        graph = node_graph[heads]
        sizes = (ptr[1:] - ptr[:-1])[graph]
        positives = pos[0] * num_nodes + pos[1]

        def draw() -> Tensor:
            return ptr[graph] + (torch.rand(heads.numel(), device=pos.device) * sizes).long().clamp(max=sizes - 1)

        tails = draw()
        invalid = invalid_pairs(heads * num_nodes + tails, positives)
        for _ in range(RESAMPLE_TRIES):
            tails = torch.where(invalid, draw(), tails)
            invalid = invalid_pairs(heads * num_nodes + tails, positives)
        keep = ~invalid
        return torch.stack([heads[keep], tails[keep]])

    def rank_queries(self, batch: Batch, h: Tensor, pos: Tensor) -> tuple[dict[str, Tensor], Tensor, Tensor, Tensor]:
        """For each positive pair, the scores of its head with every node of its graph: ranks (see
        :func:`link_ranks`), the graph id of each query, the positive scores and the BCE over all
        candidate pairs (true tails labelled 1)."""
        num_nodes = h.size(0)
        node_graph, ptr = self._graph_layout(batch, num_nodes, h.device)
        head, tail = pos
        graph = node_graph[head]
        sizes = (ptr[1:] - ptr[:-1])[graph]
        columns = torch.arange(int(sizes.max()) if sizes.numel() else 0, device=h.device)
        valid = columns.unsqueeze(0) < sizes.unsqueeze(1)
        nodes = (ptr[graph].unsqueeze(1) + columns.unsqueeze(0)).clamp(max=num_nodes - 1)
        step = max(1, self.score_chunk // max(1, columns.numel()))
        scores = (
            torch.cat(
                [
                    score_pairs(self.network.head, h[head[i : i + step]].unsqueeze(1), h[nodes[i : i + step]]).squeeze(-1)
                    for i in range(0, head.numel(), step)
                ]
            )
            if head.numel()
            else h.new_zeros(0, columns.numel())
        )
        true_tails = torch.isin(head.unsqueeze(1) * num_nodes + nodes, head * num_nodes + tail) & valid
        ranks = link_ranks(scores.detach(), valid, tail - ptr[graph], head - ptr[graph], true_tails)
        loss = F.binary_cross_entropy_with_logits(scores[valid], true_tails[valid].float()) if valid.any() else scores.sum()
        groups = batch.idx[graph] if "idx" in batch else graph
        return ranks, groups, scores.gather(1, (tail - ptr[graph]).view(-1, 1)).view(-1), loss

    def _step(self, batch: Batch, split: str) -> tuple[Tensor, dict[str, Tensor]]:
        h = self(batch)
        pairs = batch.edge_label_index
        labels = batch.edge_label.float().view(-1) if "edge_label" in batch else torch.ones(pairs.size(1), device=h.device)
        ids = batch.edge_label_id if "edge_label_id" in batch else None
        metric = self.metrics[f"{split}_metric"]
        positive = labels > 0.5
        if self.protocol == "classification":
            y_pred = self.score(h, pairs)
            loss = self.loss_fn(y_pred, labels)
            metric.update(y_pred.detach().float(), labels)
            y_true = labels
        elif self.protocol == "hits":
            if split == "train":
                neg = self.sample_negatives(batch, pairs[:, positive], h.size(0))
                pos_s, neg_s = self.score(h, pairs[:, positive]), self.score(h, neg)
                y_pred, y_true = pos_s, labels[positive]
                ids = ids[positive] if ids is not None else None
            else:
                y_pred, y_true = self.score(h, pairs), labels
                pos_s, neg_s = y_pred[positive], y_pred[~positive]
            loss = pos_neg_bce(pos_s, neg_s)
            metric.update(pos_s.detach(), neg_s.detach())
        else:
            pos = pairs[:, positive]
            ranks, groups, y_pred, loss = self.rank_queries(batch, h, pos)
            if split == "train":
                loss = self.sampled_pairs_loss(y_pred, self.score(h, self.sample_negatives(batch, pos, h.size(0))))
            metric.update(ranks, groups)
            y_true = labels[positive]
            ids = ids[positive] if ids is not None else None
        self.losses[f"{split}_loss"].update(loss.detach().float(), max(1, int(y_pred.numel())))
        if ids is None:
            ids = torch.arange(self._test_seen, self._test_seen + y_pred.numel(), device=y_pred.device)
        if split == self.test_split:
            self._test_seen += y_pred.numel()
        # saved predictions in float32 whatever the precision the network ran in (NumPy has no bfloat16)
        return loss, {"y_pred": y_pred.detach().float(), "y_true": y_true.detach(), "index": ids.detach()}

    def test_step(self, batch: Batch, batch_idx: int) -> dict[str, Tensor]:
        return self._step(batch, self.test_split)[1]

    def _log_epoch_metric(self, split: str) -> Tensor:
        self._log_epoch_loss(split)
        metric = self.metrics[f"{split}_metric"]
        values = metric.compute_all() if hasattr(metric, "compute_all") else {self.info.metric: metric.compute()}
        metric.reset()
        for name, value in values.items():
            self.log(f"{split}/{name}", value)
        return values[self.info.metric]

    def on_test_epoch_start(self) -> None:
        self._test_seen = 0
