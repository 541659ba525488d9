"""SMILES featurization equals OGB's ``smiles2graph`` on rare values, by the compiled pickle reader
and by RDKit's getters (the fall-back for pickles that reader does not read)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from ogb.utils import smiles2graph

from graphbench.data.sources import mol_pickle
from graphbench.data.sources.molecules import ATOM_FEATURES, BOND_FEATURES, _to_ogb_indices, featurize_smiles
from graphbench.vocabulary.errors import DataError

#: charges, radicals, chirality, aromaticity, a stereo double bond, a dummy atom (misc atomic
#: number), atom map numbers, an isotope, and a bond-less molecule
SMILES = [
    "C[N+](C)(C)C",
    "[CH2]C",
    "F/C=C/F",
    "C[C@H](N)C(=O)O",
    "c1ccccc1",
    "*CC",
    "[CH3:7][OH:200]",
    "[13CH4]",
    "[Na+].[Cl-]",
    "C",
]


_read_pickles = mol_pickle.read_pickles


def _unreadable(buf: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, ...]:
    *arrays, status = _read_pickles(buf, starts)
    return (*arrays, np.full_like(status, mol_pickle.UNSUPPORTED_ATOM))


@pytest.mark.parametrize("path", ["pickles", "getters"])
def test_rare_values_follow_ogb_rules(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "getters":
        monkeypatch.setattr(mol_pickle, "read_pickles", _unreadable)
    data, slices = featurize_smiles(SMILES, torch.zeros(len(SMILES), 1), num_workers=1)
    for i, s in enumerate(SMILES):
        g = smiles2graph(s)
        n0, n1, e0, e1 = slices["x"][i], slices["x"][i + 1], slices["edge_index"][i], slices["edge_index"][i + 1]
        assert np.array_equal(data.x[n0:n1].numpy(), g["node_feat"]), s
        assert np.array_equal(data.edge_index[:, e0:e1].numpy(), g["edge_index"]), s
        assert np.array_equal(data.edge_attr[e0:e1].numpy(), g["edge_feat"]), s


def test_an_unparsable_smiles_names_itself() -> None:
    with pytest.raises(DataError, match="could not parse the SMILES string 'C1CC'"):
        featurize_smiles(["CCO", "C1CC"], torch.zeros(2, 1), num_workers=1)


def test_codes_map_to_ogb_indices_in_place() -> None:
    """Carbon, clockwise, degree 2000 (beyond every table: misc), charge -1, 3 Hs, SP3, aromatic, in a
    ring; bonds single/none/not conjugated, aromatic/E/conjugated, ZERO (misc)/Z."""
    atoms = np.array([[6, 1, 2000, -1, 3, 0, 4, 1, 1]], dtype=np.int16)
    bonds = np.array([[1, 0, 0], [12, 3, 1], [21, 2, 0]], dtype=np.int16)
    _to_ogb_indices(atoms, ATOM_FEATURES)
    _to_ogb_indices(bonds, BOND_FEATURES)
    assert atoms.tolist() == [[5, 1, 11, 4, 3, 0, 2, 1, 1]]
    assert bonds.tolist() == [[0, 0, 0], [3, 2, 1], [4, 1, 0]]


def test_a_code_a_strict_vocabulary_lacks_raises_as_ogb_does() -> None:
    bonds = np.array([[1, 0, 0], [1, 6, 1]], dtype=np.int16)  # stereo 6: STEREOATROPCW
    with pytest.raises(ValueError, match="'STEREOATROPCW' is not in list"):
        _to_ogb_indices(bonds, BOND_FEATURES)
