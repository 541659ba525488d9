"""Tiny link-level datasets written in their official raw formats: OGB's ogbl-collab layout, LRGB's
PCQM-Contact tsv.gz of CXSMILES with contact annotations, PyG's TSP_v2.pt."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import torch


def _write_csv_gz(path: Path, rows: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as handle:
        for row in np.atleast_2d(rows.reshape(len(rows), -1)):
            handle.write(",".join(str(v) for v in row) + "\n")


def write_ogbl_collab(
    root: Path, num_nodes: int = 40, num_train: int = 80, num_eval: int = 10, num_neg: int = 60, seed: int = 0
) -> dict[str, np.ndarray]:
    """``ogbl_collab/raw/*.csv.gz`` (one row per undirected training edge) and
    ``ogbl_collab/split/time/{train,valid,test}.pt`` (``torch.save`` of dicts of numpy arrays)."""
    rng = np.random.default_rng(seed)
    folder = root / "ogbl_collab"
    edges = rng.integers(num_nodes, size=(num_train, 2))
    weight = rng.integers(1, 4, size=(num_train, 1))
    year = rng.integers(2000, 2018, size=(num_train, 1))
    _write_csv_gz(folder / "raw" / "edge.csv.gz", edges)
    _write_csv_gz(folder / "raw" / "node-feat.csv.gz", rng.random((num_nodes, 8)).round(4))
    _write_csv_gz(folder / "raw" / "num-node-list.csv.gz", np.array([[num_nodes]]))
    _write_csv_gz(folder / "raw" / "num-edge-list.csv.gz", np.array([[num_train]]))
    _write_csv_gz(folder / "raw" / "edge_weight.csv.gz", weight)
    _write_csv_gz(folder / "raw" / "edge_year.csv.gz", year)
    split = folder / "split" / "time"
    split.mkdir(parents=True, exist_ok=True)
    torch.save({"edge": edges, "weight": weight.ravel(), "year": year.ravel()}, split / "train.pt")
    out = {"edges": edges}
    for name, y in (("valid", 2018), ("test", 2019)):
        pos = rng.integers(num_nodes, size=(num_eval, 2))
        neg = rng.integers(num_nodes, size=(num_neg, 2))
        torch.save(
            {"edge": pos, "weight": np.ones(num_eval, dtype=np.int64), "year": np.full(num_eval, y), "edge_neg": neg},
            split / f"{name}.pt",
        )
        out[f"{name}_pos"], out[f"{name}_neg"] = pos, neg
    return out


def contact_cxsmiles(smiles: str, contacts: list[tuple[int, int]]) -> str:
    """A CXSMILES whose atoms carry the ``contact`` property (``;``-separated contact ids) as in the
    PCQM4Mv2 contact file: the atoms of contact ``k`` both list ``k``."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    ids: dict[int, list[str]] = {}
    for k, (a, b) in enumerate(contacts):
        ids.setdefault(a, []).append(str(k))
        ids.setdefault(b, []).append(str(k))
    for atom, values in ids.items():
        mol.GetAtomWithIdx(atom).SetProp("contact", ";".join(values))
    return Chem.MolToCXSmiles(mol, Chem.SmilesWriteParams(), Chem.CXSmilesFields.CX_ATOM_PROPS)


MOLECULES = ["CCOCCNCCO", "c1ccccc1CCCN", "CC(C)CCCCO", "OCCCCCCCCN", "CCN(CC)CCCCO"]


def write_pcqm_contact(root: Path, num_rows: int = 120) -> list[tuple[str, list[tuple[int, int]]]]:
    """``pcqm4m-v2-contact/raw/pcqm4m-contact.tsv.gz`` with a ``cxsmiles`` column. Returns the
    (smiles, contacts) of the rows LRGB keeps (every 6th); every 4th kept row has no contact."""
    kept = []
    lines = ["idx\tcxsmiles"]
    for i in range(num_rows):
        smiles = MOLECULES[i % len(MOLECULES)]
        contacts = [] if (i // 6) % 4 == 3 else [(0, 5), (1, 6)] + ([(2, 7)] if i % 2 == 0 else [])
        if i % 6 == 0:
            kept.append((smiles, contacts))
        lines.append(f"{i}\t{contact_cxsmiles(smiles, contacts)}")
    path = root / "pcqm4m-v2-contact" / "raw" / "pcqm4m-contact.tsv.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(lines) + "\n")
    return kept


def write_tsp(root: Path, sizes: tuple[int, int, int] = (6, 2, 2), seed: int = 0) -> list[list[dict[str, torch.Tensor]]]:
    """``TSP/raw/TSP_v2.pt``: three lists (train, val, test) of dicts with ``pos``, ``edge_index``
    (k-NN, k=3), ``edge_attr`` (distances) and ``y`` (1 on the tour through the nodes in angular order)."""
    gen = torch.Generator().manual_seed(seed)
    splits = []
    for count in sizes:
        graphs = []
        for _ in range(count):
            n = int(torch.randint(8, 14, (1,), generator=gen))
            pos = torch.rand(n, 2, generator=gen)
            dist = torch.cdist(pos, pos) + torch.eye(n) * 1e9
            knn = dist.topk(3, largest=False).indices
            edge_index = torch.stack([torch.arange(n).repeat_interleave(3), knn.reshape(-1)])
            order = torch.atan2(pos[:, 1] - 0.5, pos[:, 0] - 0.5).argsort()
            tour = {(int(order[i]), int(order[(i + 1) % n])) for i in range(n)}
            tour |= {(b, a) for a, b in tour}
            y = torch.tensor([float((int(a), int(b)) in tour) for a, b in edge_index.t()])
            graphs.append(
                {"pos": pos, "edge_index": edge_index, "edge_attr": dist[edge_index[0], edge_index[1]].view(-1, 1), "y": y}
            )
        splits.append(graphs)
    path = root / "TSP" / "raw" / "TSP_v2.pt"
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(splits, path)
    return splits
