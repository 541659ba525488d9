"""SMILES -> graphs with exactly the features of OGB's ``smiles2graph`` (9 categorical atom, 3 bond
features), built column by column in bulk and in parallel.

``smiles2graph`` converts one molecule at a time and, per atom, calls RDKit's getters, ``str`` on
RDKit enums and ``list.index`` on OGB's vocabularies. Here each chunk of molecules is parsed and
pickled by RDKit (``Mol.ToBinary``), one compiled pass reads every atom's and bond's properties
from the pickles (:mod:`graphbench.data.sources.mol_pickle`), each column of integer codes is
mapped to OGB indices through a memo filled by OGB's own rule
(:func:`ogb.utils.features.safe_index`), and chunks are spread over processes. The getters read
the same codes where a pickle holds something that pass does not read. The graphs are identical
to calling ``smiles2graph`` serially (``tests/benchmarks/test_preprocess_equivalence.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    """Integer code of an RDKit property -> OGB feature index, computed on first sight with OGB's
    rule: the code's RDKit value (``as_key``: an enum's ``str``, a bool), then ``safe_index``
    (unknown -> the last, "misc", index) or ``list.index`` (``strict``)."""

    def __init__(self, vocabulary: str, as_key: Callable[[int], Any] = lambda v: v, strict: bool = False) -> None:
        super().__init__()
        self.choices: list[Any] = allowable_features[vocabulary]
        self.as_key = as_key
        self.strict = strict

    def __missing__(self, code: int) -> int:
        key = self.as_key(code)
        index = self.choices.index(key) if self.strict else safe_index(self.choices, key)
        self[code] = index
        return index

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        """The OGB index of every code, by a table over the codes' range (one memo look-up per
        distinct code, not per atom)."""
        if codes.size == 0:
            return codes.copy()
        low = int(codes.min())
        present = np.flatnonzero(np.bincount(codes - low))
        table = np.zeros(int(present[-1]) + 1, dtype=np.int64)
        table[present] = [self[low + int(c)] for c in present]
        return table[codes - low]


def _enum_name(enum: Any) -> Callable[[int], str]:
    """``str`` of the RDKit enum value with this code, as OGB keys it (an unknown code stays a
    number, which no vocabulary holds)."""
    return lambda code: str(enum.values.get(code, code))


_Getter = Callable[[Any], Any]

#: (RDKit getter, vocabulary keyed by the getter's integer code) in the column order of
#: ``ogb.utils.features.atom_to_feature_vector``; also the column order of
#: :data:`graphbench.data.sources.mol_pickle.ATOM_COLUMNS`
ATOM_FEATURES: tuple[tuple[_Getter, _OGBIndex], ...] = (
    (Chem.Atom.GetAtomicNum, _OGBIndex("possible_atomic_num_list")),
    (Chem.Atom.GetChiralTag, _OGBIndex("possible_chirality_list", _enum_name(Chem.ChiralType))),
    (Chem.Atom.GetTotalDegree, _OGBIndex("possible_degree_list")),
    (Chem.Atom.GetFormalCharge, _OGBIndex("possible_formal_charge_list")),
    (Chem.Atom.GetTotalNumHs, _OGBIndex("possible_numH_list")),
    (Chem.Atom.GetNumRadicalElectrons, _OGBIndex("possible_number_radical_e_list")),
    (Chem.Atom.GetHybridization, _OGBIndex("possible_hybridization_list", _enum_name(Chem.HybridizationType))),
    (Chem.Atom.GetIsAromatic, _OGBIndex("possible_is_aromatic_list", bool, strict=True)),
    (Chem.Atom.IsInRing, _OGBIndex("possible_is_in_ring_list", bool, strict=True)),
)
#: the same for ``ogb.utils.features.bond_to_feature_vector``, after the bond's two atoms
BOND_FEATURES: tuple[tuple[_Getter, _OGBIndex], ...] = (
    (Chem.Bond.GetBondType, _OGBIndex("possible_bond_type_list", _enum_name(Chem.BondType))),
    (Chem.Bond.GetStereo, _OGBIndex("possible_bond_stereo_list", _enum_name(Chem.BondStereo), strict=True)),
    (Chem.Bond.GetIsConjugated, _OGBIndex("possible_is_conjugated_list", bool, strict=True)),
)
_BOND_GETTERS: tuple[_Getter, ...] = (Chem.Bond.GetBeginAtomIdx, Chem.Bond.GetEndAtomIdx, *(g for g, _ in BOND_FEATURES))


class _Chunk(NamedTuple):
    """Featurized molecules of one chunk: atom rows, bond rows (begin, end, 3 features), counts."""

    atom_feat: np.ndarray  # [num_atoms, 9]
    bonds: np.ndarray  # [num_bonds, 5]
    num_atoms: np.ndarray  # [num_molecules]
    num_bonds: np.ndarray  # [num_molecules]


def _parse(smiles: str) -> Chem.Mol:
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise DataError(f"RDKit could not parse the SMILES string {smiles!r}; is the raw file corrupted?")
    return mol


def _featurize_chunk(smiles: Sequence[str]) -> _Chunk:
    with gc_paused():
        atoms, bonds, num_atoms, num_bonds = _read_properties(smiles)
    atom_feat = np.stack([index.lookup(atoms[:, col]) for col, (_, index) in enumerate(ATOM_FEATURES)], axis=1)
    for col, (_, index) in enumerate(BOND_FEATURES, start=2):
        bonds[:, col] = index.lookup(bonds[:, col])
    return _Chunk(atom_feat, bonds, num_atoms, num_bonds)


def _read_properties(smiles: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Integer codes of every atom's and bond's properties (atoms, bonds, counts per molecule):
    read from RDKit's binary pickles in one compiled pass; RDKit's getters where a pickle holds
    something that pass does not read (then for the whole chunk)."""
    from graphbench.data.sources.mol_pickle import OK, read_pickles  # Numba: imported only when featurizing

    pickles = [_parse(s).ToBinary() for s in smiles]
    starts = np.zeros(len(pickles) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pickles), np.int64, len(pickles)), out=starts[1:])
    atoms, bonds, num_atoms, num_bonds, status = read_pickles(np.frombuffer(b"".join(pickles), np.uint8), starts)
    if (status == OK).all():
        return atoms, bonds, num_atoms, num_bonds
    return _read_by_getters([_parse(s) for s in smiles])


def _read_by_getters(mols: list[Chem.Mol]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    atoms: list[Any] = []
    bonds: list[Any] = []
    for mol in mols:
        # by index: wrapping each atom/bond through GetAtomWithIdx is ~2x faster than iterating
        # GetAtoms()/GetBonds(), and gives the same objects in the same order
        atoms.extend(map(mol.GetAtomWithIdx, range(mol.GetNumAtoms())))
        bonds.extend(map(mol.GetBondWithIdx, range(mol.GetNumBonds())))
    return (
        _codes(atoms, [g for g, _ in ATOM_FEATURES]),
        _codes(bonds, _BOND_GETTERS),
        np.fromiter((m.GetNumAtoms() for m in mols), np.int64, len(mols)),
        np.fromiter((m.GetNumBonds() for m in mols), np.int64, len(mols)),
    )


def _codes(objects: list[Any], getters: Sequence[_Getter]) -> np.ndarray:
    out = np.empty((len(objects), len(getters)), dtype=np.int64)
    for col, get in enumerate(getters):
        out[:, col] = np.fromiter(map(int, map(get, objects)), dtype=np.int64, count=len(objects))
    return out


def featurize_smiles(smiles: Sequence[str], y: Tensor, num_workers: int | None = None) -> tuple[Data, dict[str, Tensor]]:
    """Featurize every SMILES and collate the result in bulk into ``(data, slices)``.

    Chunks of SMILES go to ``num_workers`` processes (default: every usable core). Every bond gives
    the two directed edges ``(i, j), (j, i)`` in bond order, with the bond's features on both, and
    ``edge_index`` holds graph-local node ids: the graphs equal those of serial ``smiles2graph``.
    """
    workers = num_workers or usable_cores()
    _featurize_chunk([])  # loads the compiled pickle reader here, once, not in every forked worker
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
