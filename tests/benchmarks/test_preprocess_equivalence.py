"""graphbench's bulk featurization gives exactly the graphs of the reference path (OGB's
``smiles2graph`` called serially, one ``Data`` per graph, collated), on real Peptides-func SMILES."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from ogb.utils import smiles2graph

from benchmarks.peptides import reference_collate
from graphbench.data.sources.molecules import featurize_smiles
from tests.benchmarks.conftest import NUM_SMILES


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


def test_rare_values_follow_ogb_rules() -> None:
    """Charges, radicals, chirality, aromaticity, a stereo double bond, a dummy atom (misc atomic
    number) and a bond-less molecule, each featurized as ``smiles2graph`` does."""
    smiles = ["C[N+](C)(C)C", "[CH2]C", "F/C=C/F", "C[C@H](N)C(=O)O", "c1ccccc1", "*CC", "[Na+].[Cl-]", "C"]
    data, slices = featurize_smiles(smiles, torch.zeros(len(smiles), 1), num_workers=1)
    for i, s in enumerate(smiles):
        g = smiles2graph(s)
        n0, n1, e0, e1 = slices["x"][i], slices["x"][i + 1], slices["edge_index"][i], slices["edge_index"][i + 1]
        assert np.array_equal(data.x[n0:n1].numpy(), g["node_feat"]), s
        assert np.array_equal(data.edge_index[:, e0:e1].numpy(), g["edge_index"]), s
        assert np.array_equal(data.edge_attr[e0:e1].numpy(), g["edge_feat"]), s
