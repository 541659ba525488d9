r"""Channel-wise standardization of dense input features with training-split statistics.

Tönshoff et al. (2023, "Where Did the Gap Go? Reassessing the Long-Range Graph Benchmark") standardize
the node features of the superpixel datasets (PascalVOC-SP, COCO-SP) per channel, which the original
baselines did not. For every normalized attribute (``x``, ``edge_attr``) and channel :math:`c`,

.. math::
    \mu_c = \frac{1}{|R|} \sum_{r \in R} X_{rc}, \qquad
    \sigma_c = \sqrt{\frac{1}{|R|} \sum_{r \in R} (X_{rc} - \mu_c)^2}, \qquad
    X_{rc} \leftarrow \frac{X_{rc} - \mu_c}{\sigma_c},

where :math:`R` are the rows (nodes, or edges) of the **training** graphs only, and the same map is
applied to every split, so that no validation or test statistic leaks into training. A constant
channel (:math:`\sigma_c \le` ``eps``) is only centred (:math:`\sigma_c := 1`).

How a DataModule uses it, after the processed (and PE) dataset is loaded::

    norm = ChannelwiseNorm.fit_collated(store.collated, store.slices, splits["train"])   # or .fit(graphs)
    store = GraphStore(norm(store.collated), store.slices)  # per-row map: collated == per graph
    cache it under a key that includes ``norm.cache_token`` (or ``repr(norm)``), or simply recompute:
    fitting is one pass over the training rows.

Integer (categorical) features are refused: they are embedded, not standardized.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.data.data import BaseData
from torch_geometric.transforms import BaseTransform

from graphbench.vocabulary.errors import ConfigError

DEFAULT_ATTRS: tuple[str, ...] = ("x", "edge_attr")


class _Moments:
    """Running count, mean and sum of squared deviations in float64 (Chan et al.'s parallel update)."""

    def __init__(self) -> None:
        self.count = 0
        self.mean: Tensor | None = None
        self.m2: Tensor | None = None

    def update(self, rows: Tensor) -> None:
        rows = rows.detach().reshape(rows.size(0), -1).to(torch.float64)
        n = rows.size(0)
        if n == 0:
            return
        mean = rows.mean(dim=0)
        m2 = ((rows - mean) ** 2).sum(dim=0)
        if self.mean is None or self.m2 is None:
            self.count, self.mean, self.m2 = n, mean, m2
            return
        if mean.shape != self.mean.shape:
            raise ValueError(f"channelwise: feature width changed from {self.mean.numel()} to {mean.numel()}")
        total = self.count + n
        delta = mean - self.mean
        self.mean = self.mean + delta * (n / total)
        self.m2 = self.m2 + m2 + delta**2 * (self.count * n / total)
        self.count = total


def _check_float(attr: str, value: Tensor) -> None:
    if not torch.is_floating_point(value):
        raise ConfigError(
            f"channelwise normalization needs float features, but '{attr}' is {value.dtype} "
            "(categorical features are embedded, not standardized); use feature_norm=none for this dataset"
        )


class ChannelwiseNorm(BaseTransform):
    r"""Standardizes each channel of ``x`` and ``edge_attr`` with statistics fitted on the training
    graphs (see the module docstring for the maths). Build it with :meth:`fit` or
    :meth:`fit_collated`; call it on a graph, a mini-batch or a whole collated dataset.

    Args:
        stats: attribute -> ``(mean, std)``, each of shape ``[channels]`` (``std > 0``).
    """

    def __init__(self, stats: Mapping[str, tuple[Tensor, Tensor]]) -> None:
        self.stats: dict[str, tuple[Tensor, Tensor]] = {k: (m.clone(), s.clone()) for k, (m, s) in stats.items()}
        for attr, (_, std) in self.stats.items():
            if bool((std <= 0).any()):
                raise ValueError(f"channelwise: std of '{attr}' must be positive")

    @classmethod
    def _from_moments(cls, moments: Mapping[str, _Moments], eps: float) -> ChannelwiseNorm:
        stats = {}
        for attr, mom in moments.items():
            if mom.mean is None or mom.m2 is None:
                continue
            std = (mom.m2 / mom.count).sqrt()
            std = torch.where(std > eps, std, torch.ones_like(std))
            stats[attr] = (mom.mean.to(torch.float32), std.to(torch.float32))
        if not stats:
            raise ConfigError(f"channelwise normalization found none of {list(moments)} in the training graphs")
        return cls(stats)

    @classmethod
    def fit(
        cls,
        train: Iterable[Data] | Data | Mapping[str, Tensor],
        attrs: Sequence[str] = DEFAULT_ATTRS,
        eps: float = 1e-8,
    ) -> ChannelwiseNorm:
        """Statistics over all rows of the training graphs (an iterable of ``Data``, or one collated
        ``Data``/``Batch`` of them), or over given row tensors (a mapping
        ``{"x": [N, C], "edge_attr": [E, C']}``). Absent attributes are skipped."""
        moments = {attr: _Moments() for attr in attrs}
        sources: Iterable[Mapping[str, Tensor] | Data] = [train] if isinstance(train, (Mapping, BaseData)) else train
        for graph in sources:
            for attr in attrs:
                value = graph.get(attr) if isinstance(graph, Mapping) else getattr(graph, attr, None)
                if value is None:
                    continue
                _check_float(attr, value)
                moments[attr].update(value)
        return cls._from_moments(moments, eps)

    @classmethod
    def fit_collated(
        cls,
        data: Data,
        slices: Mapping[str, Tensor],
        graph_index: Tensor | Sequence[int],
        attrs: Sequence[str] = DEFAULT_ATTRS,
        eps: float = 1e-8,
    ) -> ChannelwiseNorm:
        """Like :meth:`fit` on the graphs ``graph_index`` of a collated in-memory dataset
        (``InMemoryDataset``'s ``(data, slices)``), without materializing one ``Data`` per graph."""
        index = torch.as_tensor(graph_index, dtype=torch.long).view(-1)
        rows: dict[str, Tensor] = {}
        for attr in attrs:
            value = getattr(data, attr, None)
            if value is None or attr not in slices:
                continue
            start, end = slices[attr][index], slices[attr][index + 1]
            lengths = end - start
            offsets = torch.repeat_interleave(start - torch.cumsum(lengths, 0) + lengths, lengths)
            rows[attr] = value[torch.arange(int(lengths.sum())) + offsets]
        return cls.fit(rows, attrs=attrs, eps=eps)

    def forward(self, data: Data) -> Data:
        for attr, (mean, std) in self.stats.items():
            value = getattr(data, attr, None)
            if value is None:
                continue
            _check_float(attr, value)
            shape = value.shape
            flat = value.reshape(shape[0], -1)
            if flat.size(1) != mean.numel():
                raise ValueError(f"channelwise: '{attr}' has {flat.size(1)} channels, the statistics {mean.numel()}")
            flat = (flat - mean.to(flat)) / std.to(flat)
            setattr(data, attr, flat.reshape(shape))
        return data

    @property
    def cache_token(self) -> str:
        """A short digest of the statistics, for cache keys of normalized datasets."""
        digest = hashlib.sha256()
        for attr in sorted(self.stats):
            mean, std = self.stats[attr]
            digest.update(attr.encode())
            digest.update(mean.numpy().tobytes())
            digest.update(std.numpy().tobytes())
        return digest.hexdigest()[:16]

    def to_dict(self) -> dict[str, dict[str, list[float]]]:
        """Plain lists (for ``results.json`` or a cache file); :meth:`from_dict` restores them."""
        return {k: {"mean": m.tolist(), "std": s.tolist()} for k, (m, s) in self.stats.items()}

    @classmethod
    def from_dict(cls, stats: Mapping[str, Mapping[str, Sequence[float]]]) -> ChannelwiseNorm:
        return cls({k: (torch.tensor(v["mean"]), torch.tensor(v["std"])) for k, v in stats.items()})

    def __repr__(self) -> str:
        widths = ", ".join(f"{k}={m.numel()}" for k, (m, _) in sorted(self.stats.items()))
        return f"{type(self).__name__}({widths}, stats={self.cache_token})"
