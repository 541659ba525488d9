"""SMILES -> graphs with exactly the features of OGB's ``smiles2graph`` (9 categorical atom, 3 bond
features), built column by column in bulk and in parallel.

``smiles2graph`` converts one molecule at a time and, per atom, calls RDKit's getters, ``str`` on
RDKit enums and ``list.index`` on OGB's vocabularies. Here each chunk of molecules is parsed and
pickled by RDKit (``Mol.ToBinary``), one compiled pass reads every atom's and bond's properties
from the pickles (:mod:`graphbench.data.sources.mol_pickle`) as integer codes, a compiled look-up
maps every column to OGB indices through a table filled once by OGB's own rule
(:func:`ogb.utils.features.safe_index`), and chunks are spread over processes. RDKit's getters read
the same codes where a pickle holds something that pass does not read. The graphs are identical
to calling ``smiles2graph`` serially (``tests/benchmarks/test_preprocess_equivalence.py``,
``tests/data/sources/test_molecules.py``).
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
from graphbench.run.processes import map_chunks, usable_cores
from graphbench.speedups.gc_pause import gc_paused
from graphbench.speedups.hugepages import numpy_hugepages_off
from graphbench.vocabulary.errors import DataError


class _OGBIndex(dict):  # type: ignore[type-arg]
    """Integer code of an RDKit property -> OGB feature index, computed on first sight with OGB's
    rule: the code's RDKit value (``as_key``: an enum's ``str``, a bool), then ``safe_index``
    (unknown -> the last, "misc", index) or ``list.index`` (``strict``)."""

    def __init__(self, vocabulary: str, as_key: Callable[[int], Any] = lambda v: v, strict: bool = False) -> None:
        super().__init__()
        self.choices: list[Any] = allowable_features[vocabulary]
        self.as_key = as_key
        self.strict = strict
        self._table: np.ndarray | None = None

    def __missing__(self, code: int) -> int:
        key = self.as_key(code)
        index = self.choices.index(key) if self.strict else safe_index(self.choices, key)
        self[code] = index
        return index

    def table(self) -> np.ndarray:
        """The OGB index of every code in ``CODES`` (int16; -1 where a strict vocabulary lacks the
        code), computed once."""
        if self._table is None:
            self._table = np.array([self._index_or_missing(code) for code in CODES], dtype=np.int16)
        return self._table

    def outside(self) -> int:
        """The index of a code outside ``CODES``: "misc" (OGB's rule for unknown values), or -1
        (missing) for a strict vocabulary."""
        return -1 if self.strict else len(self.choices) - 1

    def _index_or_missing(self, code: int) -> int:
        try:
            return self[code]
        except ValueError:
            return -1


def _enum_name(enum: Any) -> Callable[[int], str]:
    """``str`` of the RDKit enum value with this code, as OGB keys it (an unknown code stays a
    number, which no vocabulary holds)."""
    return lambda code: str(enum.values.get(code, code))


_Getter = Callable[[Any], Any]
#: the integer codes an index tabulates (every RDKit property code a pickle stores as one byte,
#: signed or not, and degrees up to 1023); a code outside is "misc" or missing (strict)
CODES = range(-128, 1024)

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
#: the same for ``ogb.utils.features.bond_to_feature_vector`` and
#: :data:`graphbench.data.sources.mol_pickle.BOND_COLUMNS`
BOND_FEATURES: tuple[tuple[_Getter, _OGBIndex], ...] = (
    (Chem.Bond.GetBondType, _OGBIndex("possible_bond_type_list", _enum_name(Chem.BondType))),
    (Chem.Bond.GetStereo, _OGBIndex("possible_bond_stereo_list", _enum_name(Chem.BondStereo), strict=True)),
    (Chem.Bond.GetIsConjugated, _OGBIndex("possible_is_conjugated_list", bool, strict=True)),
)


class _Chunk(NamedTuple):
    """Featurized molecules of one chunk (compact dtypes: they cross the process boundary)."""

    atom_feat: np.ndarray  # [num_atoms, 9] int16 OGB indices
    bond_ends: np.ndarray  # [num_bonds, 2] int64 atom indices within the molecule
    bond_feat: np.ndarray  # [num_bonds, 3] int16 OGB indices
    num_atoms: np.ndarray  # [num_molecules]
    num_bonds: np.ndarray  # [num_molecules]


def _parse(smiles: str) -> Chem.Mol:
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise DataError(f"RDKit could not parse the SMILES string {smiles!r}; is the raw file corrupted?")
    return mol


def _featurize_chunk(smiles: Sequence[str]) -> _Chunk:
    with gc_paused():
        atoms, ends, bonds, num_atoms, num_bonds = _read_properties(smiles)
    _to_ogb_indices(atoms, ATOM_FEATURES)
    _to_ogb_indices(bonds, BOND_FEATURES)
    return _Chunk(atoms, ends, bonds, num_atoms, num_bonds)


def _to_ogb_indices(codes: np.ndarray, features: tuple[tuple[_Getter, _OGBIndex], ...]) -> None:
    """In place, column ``c`` of ``codes`` mapped through ``features[c]``'s vocabulary (a code a
    strict vocabulary lacks raises its ``ValueError``, as OGB's ``list.index`` does)."""
    from graphbench.data.sources.mol_pickle import map_codes  # Numba: imported only when featurizing

    indexes = [index for _, index in features]
    tables = np.stack([index.table() for index in indexes])
    missing = map_codes(codes, tables, CODES.start, np.array([index.outside() for index in indexes], dtype=np.int16))
    if missing >= 0:
        row, col = divmod(missing, len(indexes))
        indexes[col][int(codes[row, col])]  # raises


def _read_properties(smiles: Sequence[str]) -> tuple[np.ndarray, ...]:
    """Integer codes of every atom's and bond's properties, as
    :func:`graphbench.data.sources.mol_pickle.read_pickles` returns them: read from RDKit's binary
    pickles in one compiled pass; by RDKit's getters where a pickle holds something that pass does
    not read (then for the whole chunk)."""
    from graphbench.data.sources.mol_pickle import OK, read_pickles  # Numba: imported only when featurizing

    pickles = [_parse(s).ToBinary() for s in smiles]
    starts = np.zeros(len(pickles) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pickles), np.int64, len(pickles)), out=starts[1:])
    *properties, status = read_pickles(np.frombuffer(b"".join(pickles), np.uint8), starts)
    if (status == OK).all():
        return tuple(properties)
    return _read_by_getters([_parse(s) for s in smiles])


def _read_by_getters(mols: list[Chem.Mol]) -> tuple[np.ndarray, ...]:
    atoms: list[Any] = []
    bonds: list[Any] = []
    for mol in mols:
        # by index: wrapping each atom/bond through GetAtomWithIdx is ~2x faster than iterating
        # GetAtoms()/GetBonds(), and gives the same objects in the same order
        atoms.extend(map(mol.GetAtomWithIdx, range(mol.GetNumAtoms())))
        bonds.extend(map(mol.GetBondWithIdx, range(mol.GetNumBonds())))
    return (
        _codes(atoms, [g for g, _ in ATOM_FEATURES], np.int16),
        _codes(bonds, [Chem.Bond.GetBeginAtomIdx, Chem.Bond.GetEndAtomIdx], np.int64),
        _codes(bonds, [g for g, _ in BOND_FEATURES], np.int16),
        np.fromiter((m.GetNumAtoms() for m in mols), np.int64, len(mols)),
        np.fromiter((m.GetNumBonds() for m in mols), np.int64, len(mols)),
    )


def _codes(objects: list[Any], getters: Sequence[_Getter], dtype: type) -> np.ndarray:
    out = np.empty((len(objects), len(getters)), dtype=dtype)
    for col, get in enumerate(getters):
        out[:, col] = np.fromiter(map(int, map(get, objects)), dtype=np.int64, count=len(objects))
    return out


def featurize_smiles(smiles: Sequence[str], y: Tensor, num_workers: int | None = None) -> tuple[Data, dict[str, Tensor]]:
    """Featurize every SMILES and collate the result in bulk into ``(data, slices)``.

    Chunks of SMILES go to ``num_workers`` processes (default: every usable core). Every bond gives
    the two directed edges ``(i, j), (j, i)`` in bond order, with the bond's features on both, and
    ``edge_index`` holds graph-local node ids: the graphs equal those of serial ``smiles2graph``.
    Arrays are built with 4 KiB pages (:func:`graphbench.speedups.hugepages.numpy_hugepages_off`).
    """
    with numpy_hugepages_off():
        return _featurize_smiles(smiles, y, num_workers or usable_cores())


def _featurize_smiles(smiles: Sequence[str], y: Tensor, workers: int) -> tuple[Data, dict[str, Tensor]]:
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
    ends = np.concatenate([p.bond_ends for p in parts])
    edge_index = np.empty((2, len(ends), 2), dtype=np.int64)  # bond b gives edges 2b = (i, j), 2b+1 = (j, i)
    edge_index[0, :, 0] = edge_index[1, :, 1] = ends[:, 0]
    edge_index[0, :, 1] = edge_index[1, :, 0] = ends[:, 1]
    bond_feat = np.concatenate([p.bond_feat for p in parts])
    edge_attr = np.empty((len(ends), 2, bond_feat.shape[1]), dtype=np.int64)  # both edges of a bond
    edge_attr[:, 0] = edge_attr[:, 1] = bond_feat
    return collate_concatenated(
        num_nodes=torch.from_numpy(np.concatenate([p.num_atoms for p in parts])),
        num_edges=torch.from_numpy(2 * np.concatenate([p.num_bonds for p in parts])),
        edge_index=torch.from_numpy(edge_index.reshape(2, -1)),
        node={"x": torch.from_numpy(np.concatenate([p.atom_feat for p in parts], dtype=np.int64))},
        edge={"edge_attr": torch.from_numpy(edge_attr.reshape(2 * len(ends), -1))},
        graph={"y": y},
    )


def as_float_labels(rows: Sequence[Sequence[float]]) -> Tensor:
    return torch.tensor(np.asarray(rows, dtype=np.float32))
