"""SMILES -> graphs with OGB's ``smiles2graph`` (9 categorical atom, 3 bond features), in parallel."""
from __future__ import annotations

import multiprocessing as mp
import os
from typing import Sequence

import numpy as np
import torch
from ogb.utils import smiles2graph
from torch import Tensor
from torch_geometric.data import Data

from graphbench.datamodules.graph_store import collate_arrays
from graphbench.errors import DataError


def _featurize_chunk(smiles: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    out = []
    for s in smiles:
        g = smiles2graph(s)
        out.append((g["node_feat"], g["edge_index"], g["edge_feat"]))
    return out


def featurize_smiles(smiles: Sequence[str], y: Tensor, num_workers: int | None = None) -> tuple[Data, dict[str, Tensor]]:
    """Featurize every SMILES and collate the result in bulk.

    Chunks of SMILES go to ``num_workers`` processes (default: every core); the per-graph arrays
    are concatenated once. Graphs are identical to calling ``smiles2graph`` serially.
    """
    workers = num_workers or os.cpu_count() or 1
    chunk = max(1, -(-len(smiles) // (workers * 8)))
    chunks = [smiles[i : i + chunk] for i in range(0, len(smiles), chunk)]
    try:
        if workers > 1 and len(chunks) > 1:
            with mp.get_context("fork").Pool(workers) as pool:
                parts = pool.map(_featurize_chunk, chunks)
        else:
            parts = [_featurize_chunk(c) for c in chunks]
    except Exception as exc:  # rdkit raises on unparsable SMILES
        raise DataError(f"could not featurize a SMILES string with ogb.utils.smiles2graph: {exc}") from exc
    graphs = [g for part in parts for g in part]
    return collate_arrays(
        [g[0] for g in graphs],
        [g[1] for g in graphs],
        [g[2] for g in graphs],
        y,
    )


def as_float_labels(rows: Sequence[Sequence[float]]) -> Tensor:
    return torch.tensor(np.asarray(rows, dtype=np.float32))
