"""A spread-out sample of the real Peptides-func SMILES, shared by the equivalence tests (a pytest plugin of the root conftest)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphbench.data.sources.graph.peptides import read_peptides_csv
from graphbench.data.sources.molecules import featurize_smiles
from tests.conftest import real_data_root

#: every STRIDE-th peptide of the file, NUM_SMILES of them
NUM_SMILES, STRIDE = 300, 50


@pytest.fixture(scope="session")
def peptide_sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], torch.Tensor]:
    """SMILES and labels of every 50th peptide of the real file (spread over the whole file)."""
    csv = real_data_root() / "peptides-functional" / "raw" / "peptide_multi_class_dataset.csv.gz"
    with gzip.open(csv, "rt") as handle:
        lines = handle.read().splitlines(keepends=True)
    sample: Path = tmp_path_factory.mktemp("peptides") / "sample.csv.gz"
    with gzip.open(sample, "wt") as handle:
        handle.writelines([lines[0], *lines[1::STRIDE][:NUM_SMILES]])
    smiles, labels = read_peptides_csv(sample, "labels")
    return smiles, torch.tensor(np.asarray(labels, dtype=np.float32))


@pytest.fixture(scope="session")
def peptide_graphs(peptide_sample: tuple[list[str], torch.Tensor]) -> list[Data]:
    """The sample as graphbench featurizes it, one ``Data`` per peptide."""
    smiles, y = peptide_sample
    data, slices = featurize_smiles(smiles, y, num_workers=1)
    graphs = []
    for i in range(len(smiles)):
        n0, n1, e0, e1 = slices["x"][i], slices["x"][i + 1], slices["edge_index"][i], slices["edge_index"][i + 1]
        graphs.append(
            Data(x=data.x[n0:n1], edge_index=data.edge_index[:, e0:e1], edge_attr=data.edge_attr[e0:e1], y=data.y[i : i + 1])
        )
    return graphs
