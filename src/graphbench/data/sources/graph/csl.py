"""Circular Skip Link graphs (Murphy et al., 2019, "Relational Pooling"), as benchmarked by Dwivedi et al. (2020).

The graphs are generated here (deterministically); the folds are the official Benchmarking-GNNs
index files ``benchmarking-gnns/CSL/CSL_{train,val,test}.index`` (5 folds, one per line), which
index graphs ordered by class: graphs ``15c .. 15c+14`` have skip length ``skips[c]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import Source
from graphbench.data.splits import check_split_index, fold_from_index_files
from graphbench.data.store.collate import collate
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import ArgumentError
from graphbench.vocabulary.splits import SPLITS

NUM_FOLDS = 5
CSL_SKIPS = (2, 3, 4, 5, 6, 9, 11, 12, 13, 16)
FOLD_URL = "https://raw.githubusercontent.com/graphdeeplearning/benchmarking-gnns/master/data/CSL/CSL_{}.index"
CSL_FOLD_FILES = [RawFile(f"benchmarking-gnns/CSL/CSL_{s}.index", url=FOLD_URL.format(s)) for s in SPLITS]


def csl_edge_index(num_nodes: int, skip: int, permutation: np.ndarray | None = None) -> np.ndarray:
    r"""The CSL graph :math:`G_{n,r}`: a cycle :math:`i \sim i+1` plus skip links :math:`i \sim i+r`
    (mod :math:`n`); 4-regular for :math:`1 < r < n/2`. Both directions, sorted by (source, target);
    node :math:`i` is renamed ``permutation[i]`` when given."""
    i = np.arange(num_nodes)
    src = np.concatenate([i, i, (i + 1) % num_nodes, (i + skip) % num_nodes])
    dst = np.concatenate([(i + 1) % num_nodes, (i + skip) % num_nodes, i, i])
    if permutation is not None:
        src, dst = permutation[src], permutation[dst]
    pairs = np.unique(np.stack([src, dst], axis=1), axis=0)
    return pairs.T.astype(np.int64)


def generate_csl(num_nodes: int, skips: tuple[int, ...], graphs_per_class: int, seed: int) -> tuple[list[Tensor], Tensor]:
    """``graphs_per_class`` copies of every skip class with independent random node orders
    (``numpy.random.default_rng(seed)``), ordered by class; labels are the class positions."""
    rng = np.random.default_rng(seed)
    graphs, labels = [], []
    for cls, skip in enumerate(skips):
        for _ in range(graphs_per_class):
            graphs.append(torch.from_numpy(csl_edge_index(num_nodes, skip, rng.permutation(num_nodes))))
            labels.append(cls)
    return graphs, torch.tensor(labels, dtype=torch.long)


class CSL(Source):
    r"""CSL: 150 4-regular graphs on 41 nodes, 10 classes (the skip length), 15 graphs per class.
    All graphs of a class are isomorphic and every node looks alike locally, so a 1-WL-bounded
    MPNN without positional encodings is at chance (10%); the task measures what PEs add. Scored
    by accuracy on fold ``split_index`` (0..4) of the official 5-fold split (90 / 30 / 30 graphs)."""

    def __init__(
        self,
        *,
        split_index: int = 0,
        num_nodes: int = 41,
        skips: tuple[int, ...] = CSL_SKIPS,
        graphs_per_class: int = 15,
        generation_seed: int = 0,
    ) -> None:
        self.split_index = check_split_index(split_index, NUM_FOLDS, "csl")
        self.skips = tuple(int(s) for s in skips)
        if any(not 1 < s < num_nodes - 1 for s in self.skips) or len(set(self.skips)) != len(self.skips):
            raise ArgumentError(f"skips={list(self.skips)} must be distinct skip lengths in 2..{num_nodes - 2}")
        self.num_nodes = num_nodes
        self.graphs_per_class = graphs_per_class
        self.generation_seed = generation_seed

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(num_outputs=len(self.skips), node_features=FeatureSpec("constant"), edge_features=None)

    def cache_params(self) -> tuple[Any, ...]:
        return (self.split_index, self.num_nodes, self.skips, self.graphs_per_class, self.generation_seed)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        paths = raw.locate(CSL_FOLD_FILES, "CSL (fold index files)")
        edge_indices, y = generate_csl(self.num_nodes, self.skips, self.graphs_per_class, self.generation_seed)
        xs = [torch.zeros(self.num_nodes, 1, dtype=torch.long) for _ in edge_indices]
        data, slices = collate(edge_indices, {"x": xs}, graph={"y": y})
        splits = fold_from_index_files(dict(zip(SPLITS, paths)), self.split_index, NUM_FOLDS, len(y))
        return GraphStore(data, slices), splits
