"""LRGB PCQM-Contact (Dwivedi et al., 2022): predict 3D contacts between atoms of a molecule."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from ogb.utils.features import atom_to_feature_vector, bond_to_feature_vector
from torch import Tensor
from torch_geometric.data import Data

from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_files import RawFile
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import Source
from graphbench.data.store.graph_store import GraphStore
from graphbench.run.processes import map_chunks, usable_cores
from graphbench.vocabulary.errors import DataError

PCQM_CONTACT_FILES = [
    RawFile(
        "pcqm4m-v2-contact/raw/pcqm4m-contact.tsv.gz",
        md5="f7ffb27942145a2e72f6f5f51716d3bc",
        url="https://datasets-public-research.s3.us-east-2.amazonaws.com/PCQM4M/pcqm4m-contact.tsv.gz",
    )
]
SPLIT_SEED, VAL_RATIO, TEST_RATIO = 42, 0.05, 0.05


def cxsmiles_to_graph(cxsmiles: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """One molecule as the original LRGB loader reads it: parsed without sanitization, OGB's 9 atom and
    3 bond features (bonds in both directions), and the contacts: atoms whose ``contact`` property
    (``;``-separated ids) shares an id form a contact pair. ``None`` for a molecule without contacts.
    Returns ``(x [N, 9], edge_index [2, 2B], edge_attr [2B, 3], contacts [2, C])`` (contacts in both
    directions, sorted, unique)."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(cxsmiles, sanitize=False)
    if mol is None:
        raise DataError(f"RDKit cannot parse the CXSMILES {cxsmiles!r}")
    # what the unsanitized features need in current RDKit (the LRGB loader relied on older, lenient ones)
    mol.UpdatePropertyCache(strict=False)
    Chem.FastFindRings(mol)
    groups: dict[int, list[int]] = {}
    for atom in mol.GetAtoms():
        if atom.HasProp("contact"):
            for cid in str(atom.GetProp("contact")).split(";"):
                groups.setdefault(int(cid), []).append(atom.GetIdx())
    pairs = [(a, b) for atoms in groups.values() for a in atoms for b in atoms if a != b]
    if not pairs:
        return None
    contacts = np.ascontiguousarray(np.unique(np.array(pairs, dtype=np.int64), axis=0).T)
    x = np.array([atom_to_feature_vector(a) for a in mol.GetAtoms()], dtype=np.int64).reshape(-1, 9)
    edges, feats = [], []
    for bond in mol.GetBonds():
        i, j, f = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx(), bond_to_feature_vector(bond)
        edges += [(i, j), (j, i)]
        feats += [f, f]
    edge_index = np.array(edges, dtype=np.int64).reshape(-1, 2).T
    return x, edge_index, np.array(feats, dtype=np.int64).reshape(-1, 3), contacts


def _convert_chunk(smiles: Sequence[str]) -> list[Any]:
    return [cxsmiles_to_graph(s) for s in smiles]


def convert_all(smiles: Sequence[str], workers: int | None) -> list[Any]:
    workers = workers or usable_cores()
    chunk = max(1, -(-len(smiles) // (workers * 8)))
    chunks = [smiles[i : i + chunk] for i in range(0, len(smiles), chunk)]
    parts = map_chunks(_convert_chunk, chunks, workers)
    return [g for part in parts for g in part]


def shuffle_split(num_graphs: int) -> dict[str, Tensor]:
    """LRGB's ``create_shuffle_split``: a seed-42 permutation cut 90/5/5 (its exact arithmetic)."""
    perm = np.random.default_rng(seed=SPLIT_SEED).permutation(num_graphs)
    train_ratio = 1 - VAL_RATIO - TEST_RATIO
    val_ratio_rem = VAL_RATIO / (VAL_RATIO + TEST_RATIO)
    rest = perm[int(train_ratio * num_graphs) :]
    split = {
        "train": perm[: int(train_ratio * num_graphs)],
        "val": rest[: int(val_ratio_rem * len(rest))],
        "test": rest[int((1 - val_ratio_rem) * len(rest)) :],
    }
    return {k: torch.from_numpy(v.astype(np.int64)) for k, v in split.items()}


class PCQMContact(Source):
    r"""PCQM-Contact: ~529k molecules (every 6th row of ``pcqm4m-contact.tsv.gz``, those with at least one
    contact), link prediction of atom pairs in 3D contact (< 3.5 Å apart, >= 5 hops apart), with LRGB's
    90/5/5 shuffle split. Each graph carries its positive pairs as ``edge_label_index`` (both directions)
    and a global ``edge_label_id``; evaluation ranks every node of the molecule as a candidate tail:
    raw, filtered and extended-filtered MRR with Hits@1/3/10 (Tönshoff et al., 2023). The raw file's
    MD5 is checked even when a processed cache exists. ``featurize_workers``: processes for the
    CXSMILES parsing (``None``: every core)."""

    level = "link"

    def __init__(self, *, featurize_workers: int | None = None) -> None:
        self.featurize_workers = featurize_workers

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(num_outputs=1, node_features=FeatureSpec("atom"), edge_features=FeatureSpec("bond"))

    def raw_path(self, raw: RawRoot) -> Path:
        return raw.locate(PCQM_CONTACT_FILES, "PCQM-Contact")[0]

    def check_raw_files(self, raw: RawRoot) -> None:
        self.raw_path(raw)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        path = self.raw_path(raw)
        frame = pd.read_csv(path, sep="\t")
        if "cxsmiles" not in frame.columns:
            raise DataError(f"{path}: expected a 'cxsmiles' column, found {list(frame.columns)}")
        smiles = [s for i, s in enumerate(frame["cxsmiles"]) if i % 6 == 0]  # LRGB's subset
        graphs = [g for g in convert_all(smiles, self.featurize_workers) if g is not None]
        data_list, offset = [], 0
        for x, edge_index, edge_attr, contacts in graphs:
            num = contacts.shape[1]
            data_list.append(
                Data(
                    x=torch.from_numpy(x),
                    edge_index=torch.from_numpy(edge_index),
                    edge_attr=torch.from_numpy(edge_attr),
                    edge_label_index=torch.from_numpy(contacts),
                    edge_label=torch.ones(num),
                    edge_label_id=torch.arange(offset, offset + num),
                )
            )
            offset += num
        if not data_list:
            raise DataError(f"{path}: no molecule with contacts")
        return GraphStore.from_list(data_list), shuffle_split(len(data_list))
