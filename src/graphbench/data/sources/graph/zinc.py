"""ZINC (Irwin et al., 2012; Gómez-Bombarelli et al., 2018) as used by Benchmarking GNNs (Dwivedi et al., 2020).

Raw layout (that of ``torch_geometric.datasets.ZINC(root=<data_dir>/ZINC)``)::

    ZINC/raw/{train,val,test}.pickle    lists of dicts of tensors: 'atom_type' [N] (28 types),
                                        'bond_type' [N, N] dense (0 = no bond, 1..3), 'logP_SA_cycle_normalized' [1]
    ZINC/raw/{train,val,test}.index     the 12k subset: one line of comma-separated positions into the pickle
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.archives import Archive
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.io.safe_load import load_tensor_pickle
from graphbench.data.sources.base import Source
from graphbench.data.splits import read_index_folds
from graphbench.data.store.collate import collate
from graphbench.data.store.graph_store import GraphStore
from graphbench.vocabulary.errors import DataError
from graphbench.vocabulary.splits import SPLITS

ZINC_ARCHIVE = Archive("https://www.dropbox.com/s/feo9qle74kg48gy/molecules.zip?dl=1", "molecules/", "ZINC/raw")
ZINC_INDEX_URL = "https://raw.githubusercontent.com/graphdeeplearning/benchmarking-gnns/master/data/molecules/{}.index"
NUM_ATOM_TYPES = 28
NUM_BOND_TYPES = 4  # 0 (no bond) + single, double, triple
KEYS = ("atom_type", "bond_type", "logP_SA_cycle_normalized")


def zinc_raw_files(subset: bool) -> list[RawFile]:
    files = [RawFile(f"ZINC/raw/{split}.pickle") for split in SPLITS]
    if subset:
        files += [RawFile(f"ZINC/raw/{split}.index", url=ZINC_INDEX_URL.format(split)) for split in SPLITS]
    return files


def molecule_tensors(mol: Any, where: str) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``x`` [N, 1], ``edge_index`` [2, E] (every nonzero of the bond matrix, both directions),
    ``edge_attr`` [E, 1] (its bond type) and ``y`` [1, 1] of one raw ZINC molecule."""
    if not isinstance(mol, dict) or any(k not in mol for k in KEYS):
        raise DataError(
            f"{where}: expected a dict with keys {list(KEYS)}, got {type(mol).__name__} "
            f"{sorted(mol) if isinstance(mol, dict) else ''}"
        )
    x = torch.as_tensor(mol["atom_type"]).long().view(-1, 1)
    adj = torch.as_tensor(mol["bond_type"])
    if adj.shape != (x.size(0), x.size(0)):
        raise DataError(f"{where}: bond_type has shape {tuple(adj.shape)} for {x.size(0)} atoms")
    edge_index = adj.nonzero(as_tuple=False).t().contiguous()
    edge_attr = adj[edge_index[0], edge_index[1]].long().view(-1, 1)
    y = torch.as_tensor(mol["logP_SA_cycle_normalized"]).float().view(1, 1)
    return x, edge_index, edge_attr, y


class ZINC(Source):
    r"""ZINC: regress constrained solubility (penalized logP) of molecules from their atom and bond
    types, scored by MAE. ``subset: true`` is the 12k-graph ZINC of Benchmarking GNNs (10,000 /
    1,000 / 1,000 via the official ``.index`` files); ``subset: false`` is ZINC-full (249,456 graphs,
    the pickles' own 220,011 / 24,445 / 5,000 split). Nodes: 28 atom types, edges: 3 bond types
    (categorical)."""

    def __init__(self, *, subset: bool) -> None:
        self.subset = subset

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(
            num_outputs=1,
            node_features=FeatureSpec("categorical", cardinalities=(NUM_ATOM_TYPES,)),
            edge_features=FeatureSpec("categorical", cardinalities=(NUM_BOND_TYPES,)),
        )

    def cache_params(self) -> tuple[Any, ...]:
        return (self.subset,)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        files = zinc_raw_files(self.subset)
        located = raw.locate(files, "ZINC" if self.subset else "ZINC-full", [ZINC_ARCHIVE])
        paths = {Path(f.relpath).name: p for f, p in zip(files, located)}
        xs, edge_indices, edge_attrs, ys, splits = [], [], [], [], {}
        for split in SPLITS:
            mols = load_tensor_pickle(paths[f"{split}.pickle"])
            if not isinstance(mols, (list, tuple)):
                raise DataError(f"{paths[f'{split}.pickle']}: expected a list of molecules, got {type(mols).__name__}")
            positions = range(len(mols))
            if self.subset:
                folds = read_index_folds(paths[f"{split}.index"])
                if len(folds) != 1:
                    raise DataError(f"{paths[f'{split}.index']}: expected one line of indices, found {len(folds)}")
                positions = folds[0].tolist()
                if positions and (min(positions) < 0 or max(positions) >= len(mols)):
                    raise DataError(f"{paths[f'{split}.index']}: indexes outside the {len(mols)} molecules of {split}.pickle")
            start = len(ys)
            for i in positions:
                x, edge_index, edge_attr, y = molecule_tensors(mols[i], f"{paths[f'{split}.pickle']}[{i}]")
                xs.append(x)
                edge_indices.append(edge_index)
                edge_attrs.append(edge_attr)
                ys.append(y)
            splits[split] = torch.arange(start, len(ys))
        data, slices = collate(edge_indices, {"x": xs}, {"edge_attr": edge_attrs}, {"y": torch.cat(ys)})
        max_bond = int(data.edge_attr.max()) if data.edge_attr.numel() else 0
        if int(data.x.max()) >= NUM_ATOM_TYPES or max_bond >= NUM_BOND_TYPES:
            raise DataError(f"ZINC atom/bond types exceed the official {NUM_ATOM_TYPES}/{NUM_BOND_TYPES - 1} types")
        return GraphStore(data, slices), splits
