"""Peptides-func for the benchmarks: graphbench's source and DataModule, optionally on its first
``limit`` peptides (quick runs), and the reference LRGB processing it is compared with."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from ogb.utils import smiles2graph
from torch import Tensor
from torch_geometric.data import Data, InMemoryDataset
from torch_geometric.transforms import BaseTransform

from benchmarks.common import Context
from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.datamodules.schema import DatasetConfig, ManyGraphsConfig
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.graph.peptides import PeptidesFunc, read_split
from graphbench.data.sources.molecules import featurize_smiles
from graphbench.data.store.graph_store import GraphStore

RAW = "peptides-functional"
CSV = "peptides-functional/raw/peptide_multi_class_dataset.csv.gz"


class PeptidesFuncSample(PeptidesFunc):
    """Peptides-func restricted to its first ``limit`` peptides (the official split restricted to
    them); ``limit=None`` is the full dataset, built by :meth:`PeptidesFunc.build` itself."""

    def __init__(self, *, limit: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limit = limit

    def cache_params(self) -> tuple[Any, ...]:
        return (*super().cache_params(), self.limit)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        if self.limit is None:
            return super().build(raw)
        csv_path, split_path = self.raw_paths(raw)
        smiles, y = self.read_labels(csv_path)
        smiles, y = smiles[: self.limit], y[: self.limit]
        data, slices = featurize_smiles(smiles, y, self.featurize_workers)
        splits = {k: v[v < len(smiles)] for k, v in read_split(split_path, 1 << 62).items()}
        return GraphStore(data, slices), splits


def datamodule(
    ctx: Context, limit: int | None, batch_size: int = 128, pe_transform: BaseTransform | None = None
) -> GraphLevelDataModule:
    return GraphLevelDataModule(
        source=PeptidesFuncSample(limit=limit),
        dataset=DatasetConfig(
            name="peptides-func",
            data_dir=ctx.data_dir,
            cache_dir=ctx.cache_dir,
            task_type="multilabel",
            metric="ap",
            higher_is_better=True,
        ),
        layout=ManyGraphsConfig(batch_size=batch_size),
        pe_transform=pe_transform,
    )


def reference_collate(smiles: Sequence[str], y: Tensor) -> tuple[Data, dict[str, Tensor]]:
    """The LRGB loader's featurization: OGB's ``smiles2graph`` called serially, one ``Data`` per
    graph (``y`` row ``i`` is graph ``i``'s labels), collated."""
    data_list = []
    for s, label in zip(smiles, y):
        graph = smiles2graph(s)
        data_list.append(
            Data(
                x=torch.from_numpy(graph["node_feat"]).to(torch.int64),
                edge_index=torch.from_numpy(graph["edge_index"]).to(torch.int64),
                edge_attr=torch.from_numpy(graph["edge_feat"]).to(torch.int64),
                y=label.unsqueeze(0),
            )
        )
    return InMemoryDataset.collate(data_list)


def reference_process(csv_path: Path, limit: int | None) -> tuple[Data, dict[str, Tensor]]:
    """What the LRGB loader's ``PeptidesFunctionalDataset.process`` does: read the csv with pandas,
    parse every label list, then :func:`reference_collate`."""
    frame = pd.read_csv(csv_path)
    if limit is not None:
        frame = frame.iloc[:limit]
    y = torch.tensor([ast.literal_eval(labels) for labels in frame["labels"]], dtype=torch.float32)
    return reference_collate(list(frame["smiles"]), y)
