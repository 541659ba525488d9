"""graphbench's bulk featurization gives exactly the graphs of the reference path (OGB's
``smiles2graph`` called serially, one ``Data`` per graph, collated), on real Peptides-func SMILES."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from rdkit import Chem

from benchmarks.peptides import reference_collate
from graphbench.data.sources.mol_pickle import OK, read_pickles
from graphbench.data.sources.molecules import featurize_smiles
from tests.peptide_sample import NUM_SMILES


@pytest.mark.real_data
@pytest.mark.parametrize("workers", [1, 2])
def test_bulk_featurization_equals_serial_smiles2graph(peptide_sample: tuple[list[str], torch.Tensor], workers: int) -> None:
    smiles, y = peptide_sample
    assert len(smiles) == NUM_SMILES
    expected, expected_slices = reference_collate(smiles, y)
    data, slices = featurize_smiles(smiles, y, num_workers=workers)
    assert set(data.keys()) == set(expected.keys()) == {"x", "edge_index", "edge_attr", "y"}
    for key in expected.keys():
        assert data[key].dtype == expected[key].dtype, key
        assert torch.equal(data[key], expected[key]), key
        assert torch.equal(slices[key], expected_slices[key]), key


@pytest.mark.real_data
def test_real_peptides_take_the_compiled_path(peptide_sample: tuple[list[str], torch.Tensor]) -> None:
    """With the pinned RDKit, every real peptide's pickle is read by the compiled pass: a new RDKit
    whose pickles it cannot read shows up here, not as a silent fall-back to the getters."""
    smiles, _ = peptide_sample
    pickles = [Chem.MolFromSmiles(s).ToBinary() for s in smiles]
    starts = np.concatenate([[0], np.cumsum([len(p) for p in pickles])]).astype(np.int64)
    *_, status = read_pickles(np.frombuffer(b"".join(pickles), np.uint8), starts)
    assert (status == OK).all()
