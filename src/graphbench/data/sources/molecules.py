"""SMILES -> graphs with exactly the features of OGB's ``smiles2graph`` (9 categorical atom, 3 bond
features), built column by column in bulk and in parallel.

``smiles2graph`` converts one molecule at a time and, per atom, calls ``str`` on RDKit enums and
``list.index`` on OGB's vocabularies. Here the RDKit getters run over all atoms (bonds) of a chunk of
molecules at once, each raw value is mapped to its OGB index through a memo filled by OGB's own rule
(:func:`ogb.utils.features.safe_index`), and chunks are spread over processes. The graphs are
identical to calling ``smiles2graph`` serially (``tests/benchmarks/test_preprocess_equivalence.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np
import torch
from ogb.utils.features import allowable_features, safe_index
from rdkit import Chem
from torch import Tensor
from torch_geometric.data import Data

from graphbench.data.store.collate import collate_concatenated
from graphbench.errors import DataError
from graphbench.gc_pause import gc_paused
from graphbench.processes import map_chunks, usable_cores


class _OGBIndex(dict):  # type: ignore[type-arg]
    """Raw RDKit value -> OGB feature index, computed on first sight with OGB's rule: ``str`` of
    enums, then ``safe_index`` (unknown -> the last, "misc", index) or ``list.index`` (``strict``)."""

    def __init__(self, vocabulary: str, as_key: Callable[[Any], Any] = lambda v: v, strict: bool = False) -> None:
        super().__init__()
        self.choices: list[Any] = allowable_features[vocabulary]
        self.as_key = as_key
        self.strict = strict

    def __missing__(self, value: Any) -> int:
        key = self.as_key(value)
        index = self.choices.index(key) if self.strict else safe_index(self.choices, key)
        self[value] = index
        return index


_Getter = Callable[[Any], Any]

#: (getter, vocabulary) in the column order of ``ogb.utils.features.atom_to_feature_vector``
ATOM_FEATURES: tuple[tuple[_Getter, _OGBIndex], ...] = (
    (Chem.Atom.GetAtomicNum, _OGBIndex("possible_atomic_num_list")),
    (Chem.Atom.GetChiralTag, _OGBIndex("possible_chirality_list", str)),
    (Chem.Atom.GetTotalDegree, _OGBIndex("possible_degree_list")),
    (Chem.Atom.GetFormalCharge, _OGBIndex("possible_formal_charge_list")),
    (Chem.Atom.GetTotalNumHs, _OGBIndex("possible_numH_list")),
    (Chem.Atom.GetNumRadicalElectrons, _OGBIndex("possible_number_radical_e_list")),
    (Chem.Atom.GetHybridization, _OGBIndex("possible_hybridization_list", str)),
    (Chem.Atom.GetIsAromatic, _OGBIndex("possible_is_aromatic_list", strict=True)),
    (Chem.Atom.IsInRing, _OGBIndex("possible_is_in_ring_list", strict=True)),
)
#: (getter, vocabulary) in the column order of ``ogb.utils.features.bond_to_feature_vector``
BOND_FEATURES: tuple[tuple[_Getter, _OGBIndex], ...] = (
    (Chem.Bond.GetBondType, _OGBIndex("possible_bond_type_list", str)),
    (Chem.Bond.GetStereo, _OGBIndex("possible_bond_stereo_list", str, strict=True)),
    (Chem.Bond.GetIsConjugated, _OGBIndex("possible_is_conjugated_list", strict=True)),
)


class _Chunk(NamedTuple):
    """Featurized molecules of one chunk: atom rows, bond rows (begin, end, 3 features), counts."""

    atom_feat: np.ndarray  # [num_atoms, 9]
    bonds: np.ndarray  # [num_bonds, 5]
    num_atoms: np.ndarray  # [num_molecules]
    num_bonds: np.ndarray  # [num_molecules]


def _columns(objects: list[Any], getters: Sequence[tuple[_Getter, _OGBIndex | None]]) -> np.ndarray:
    out = np.empty((len(objects), len(getters)), dtype=np.int64)
    for col, (get, index) in enumerate(getters):
        values = map(get, objects) if index is None else map(index.__getitem__, map(get, objects))
        out[:, col] = np.fromiter(values, dtype=np.int64, count=len(objects))
    return out


_BOND_COLUMNS: tuple[tuple[_Getter, _OGBIndex | None], ...] = (
    (Chem.Bond.GetBeginAtomIdx, None),
    (Chem.Bond.GetEndAtomIdx, None),
    *BOND_FEATURES,
)


def _featurize_chunk(smiles: Sequence[str]) -> _Chunk:
    with gc_paused():
        return _featurize_molecules(smiles)


def _featurize_molecules(smiles: Sequence[str]) -> _Chunk:
    atoms: list[Any] = []
    bonds: list[Any] = []
    num_atoms, num_bonds = [], []
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        if mol is None:
            raise DataError(f"RDKit could not parse the SMILES string {s!r}; is the raw file corrupted?")
        n_atoms, n_bonds = mol.GetNumAtoms(), mol.GetNumBonds()
        # by index: wrapping each atom/bond through GetAtomWithIdx is ~2x faster than iterating
        # GetAtoms()/GetBonds(), and gives the same objects in the same order
        atoms.extend(map(mol.GetAtomWithIdx, range(n_atoms)))
        bonds.extend(map(mol.GetBondWithIdx, range(n_bonds)))
        num_atoms.append(n_atoms)
        num_bonds.append(n_bonds)
    return _Chunk(
        _columns(atoms, ATOM_FEATURES),
        _columns(bonds, _BOND_COLUMNS),
        np.asarray(num_atoms, dtype=np.int64),
        np.asarray(num_bonds, dtype=np.int64),
    )


def featurize_smiles(smiles: Sequence[str], y: Tensor, num_workers: int | None = None) -> tuple[Data, dict[str, Tensor]]:
    """Featurize every SMILES and collate the result in bulk into ``(data, slices)``.

    Chunks of SMILES go to ``num_workers`` processes (default: every usable core). Every bond gives
    the two directed edges ``(i, j), (j, i)`` in bond order, with the bond's features on both, and
    ``edge_index`` holds graph-local node ids: the graphs equal those of serial ``smiles2graph``.
    """
    workers = num_workers or usable_cores()
    size = max(1, -(-len(smiles) // (workers * 4)))
    chunks = [smiles[i : i + size] for i in range(0, len(smiles), size)]
    try:
        parts = map_chunks(_featurize_chunk, chunks, workers)
    except DataError:
        raise
    except Exception as exc:  # anything RDKit raises on a malformed molecule
        raise DataError(f"could not featurize a SMILES string like ogb.utils.smiles2graph: {exc}") from exc
    if not parts:
        parts = [_featurize_chunk([])]
    bonds = np.concatenate([p.bonds for p in parts])
    edge_index = np.empty((2, 2 * len(bonds)), dtype=np.int64)
    edge_index[:, 0::2] = bonds[:, :2].T  # (i, j)
    edge_index[:, 1::2] = bonds[:, 1::-1].T  # (j, i)
    return collate_concatenated(
        num_nodes=torch.from_numpy(np.concatenate([p.num_atoms for p in parts])),
        num_edges=torch.from_numpy(2 * np.concatenate([p.num_bonds for p in parts])),
        edge_index=torch.from_numpy(edge_index),
        node={"x": torch.from_numpy(np.concatenate([p.atom_feat for p in parts]))},
        edge={"edge_attr": torch.from_numpy(np.repeat(bonds[:, 2:], 2, axis=0))},
        graph={"y": y},
    )


def as_float_labels(rows: Sequence[Sequence[float]]) -> Tensor:
    return torch.tensor(np.asarray(rows, dtype=np.float32))
