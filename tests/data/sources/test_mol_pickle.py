"""The compiled reader of RDKit's binary pickles gives exactly the codes of RDKit's getters."""

from __future__ import annotations

import numpy as np
import pytest
from rdkit import Chem

from graphbench.data.sources.mol_pickle import (
    MALFORMED,
    NO_RING_INFO,
    OK,
    UNKNOWN_VERSION,
    UNSUPPORTED_ATOM,
    read_pickles,
)
from graphbench.data.sources.molecules import _read_by_getters

#: charges, radicals, chirality, stereo double bonds, aromatic rings, atom map numbers (one byte
#: and beyond), isotopes, dummy atoms, explicit hydrogens, fragments, ring-free and bond-free
SMILES = [
    "C[NH3+]",
    "C[N+](C)(C)[O-]",
    "[CH2]C",
    "[CH]C",
    "F/C=C/F",
    "C/C=C\\C",
    "C[C@H](N)C(=O)O",
    "C[C@@H]1CC[C@H](C)CC1",
    "c1ccc2ccccc2c1",
    "c1cc[nH]c1",
    "[CH3:7][OH:200]",
    "[13CH3][2H]",
    "*CC",
    "[H][H]",
    "[Na+].[Cl-]",
    "C#N",
    "O=S(=O)(O)O",
    "[Fe]",
    "C",
]


def _ladder(rungs: int) -> Chem.Mol:
    """Two chains of ``rungs`` carbons joined at every position: 2*rungs atoms, 3*rungs-2 bonds."""
    mol = Chem.RWMol()
    for _ in range(2 * rungs):
        mol.AddAtom(Chem.Atom(6))
    for i in range(rungs - 1):
        mol.AddBond(i, i + 1, Chem.BondType.SINGLE)
        mol.AddBond(rungs + i, rungs + i + 1, Chem.BondType.SINGLE)
    for i in range(rungs):
        mol.AddBond(i, rungs + i, Chem.BondType.SINGLE)
    Chem.SanitizeMol(mol)
    return mol.GetMol()


def _read(mols: list[Chem.Mol]) -> tuple[np.ndarray, ...]:
    pickles = [m.ToBinary() for m in mols]
    starts = np.concatenate([[0], np.cumsum([len(p) for p in pickles])]).astype(np.int64)
    return read_pickles(np.frombuffer(b"".join(pickles), np.uint8), starts)


def test_codes_of_a_small_molecule_by_hand() -> None:
    """Methylammonium: C and N[+] each with 3 hydrogens, degree 4, SP3 (code 4), one single bond
    (code 1), no stereo, not conjugated, nothing aromatic or in a ring."""
    atoms, ends, bonds, num_atoms, num_bonds, status = _read([Chem.MolFromSmiles("C[NH3+]")])
    assert status.tolist() == [OK]
    assert num_atoms.tolist() == [2] and num_bonds.tolist() == [1]
    assert atoms.tolist() == [[6, 0, 4, 0, 3, 0, 4, 0, 0], [7, 0, 4, 1, 3, 0, 4, 0, 0]]
    assert ends.tolist() == [[0, 1]]
    assert bonds.tolist() == [[1, 0, 0]]


@pytest.mark.parametrize(
    "mols",
    [
        pytest.param([Chem.MolFromSmiles(s) for s in SMILES], id="one-byte-indices"),
        pytest.param([_ladder(100)], id="200-atoms-298-bonds"),  # indices widen with the bonds
        pytest.param([Chem.MolFromSmiles("C1CC1" + "C" * 300 + "[C@H](N)O")], id="305-atoms"),
        pytest.param([Chem.MolFromSmiles(s) for s in SMILES] + [_ladder(100)] + [Chem.MolFromSmiles("CC")], id="mixed"),
    ],
)
def test_codes_equal_rdkit_getters(mols: list[Chem.Mol]) -> None:
    *got, status = _read(mols)
    assert (status == OK).all()
    for ours, getters in zip(got, _read_by_getters(mols), strict=True):
        assert ours.dtype == getters.dtype
        assert np.array_equal(ours, getters)


def test_what_it_cannot_read_is_reported_per_molecule() -> None:
    ok = Chem.MolFromSmiles("CCO").ToBinary()
    newer = bytearray(ok)
    newer[8] += 1  # the major version
    pickles = [
        Chem.MolFromSmarts("C~[#7]").ToBinary(),  # query atoms
        Chem.MolFromSmiles("CC1CC1", sanitize=False).ToBinary(),  # rings never perceived
        bytes(newer),
        ok[:-12],  # cut short
        b"\x00" * 40,
        ok,
    ]
    starts = np.concatenate([[0], np.cumsum([len(p) for p in pickles])]).astype(np.int64)
    atoms, _, _, num_atoms, _, status = read_pickles(np.frombuffer(b"".join(pickles), np.uint8), starts)
    assert status.tolist() == [UNSUPPORTED_ATOM, NO_RING_INFO, UNKNOWN_VERSION, MALFORMED, MALFORMED, OK]
    assert atoms[-3:, 0].tolist() == [6, 6, 8]  # the last molecule's rows, after the others'
    assert num_atoms[-1] == 3


def test_no_molecules() -> None:
    atoms, ends, bonds, num_atoms, num_bonds, status = read_pickles(np.zeros(0, np.uint8), np.zeros(1, np.int64))
    assert atoms.shape == (0, 9) and ends.shape == (0, 2) and bonds.shape == (0, 3)
    assert num_atoms.size == num_bonds.size == status.size == 0


def test_every_truncation_is_malformed_until_the_rings_are_complete() -> None:
    """Cut after any byte before the end of the ring section (the conformer block, 9 bytes, and
    ``ENDMOL`` follow it), a pickle is reported malformed; the next molecule is still read."""
    whole = Chem.MolFromSmiles("[CH3:7]/C=C/[13CH2]c1ccccc1*").ToBinary()
    rings_end = len(whole) - 10
    for cut in range(len(whole) + 1):
        pickles = [whole[:cut], whole]
        starts = np.array([0, cut, cut + len(whole)], dtype=np.int64)
        atoms, _, _, num_atoms, _, status = read_pickles(np.frombuffer(b"".join(pickles), np.uint8), starts)
        assert status.tolist() == [MALFORMED if cut < rings_end else OK, OK], cut
        assert np.array_equal(atoms[-num_atoms[1] :], _read_by_getters([Chem.MolFromSmiles("[CH3:7]/C=C/[13CH2]c1ccccc1*")])[0])
