"""``python -m graphbench.analysis``: the homophily command (datasets composed as run.py composes them, one row
each), its argument errors, the graph of an inductive DataModule, and the memorization command's table and plot."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig
from torch_geometric.data import Data

from graphbench.analysis.__main__ import build_parser, graph_of, main
from tests.analysis.test_homophily import PATH_EDGES, PATH_Y
from tests.analysis.test_memorization_plots import PNG_MAGIC, write_run
from tests.paths import CONF, SHARED_DATA


def test_graph_of_joins_the_graphs_of_an_inductive_datamodule() -> None:
    first = Data(edge_index=torch.tensor([[0, 1], [1, 0]]), y=torch.tensor([0, 1]), num_nodes=2)
    second = Data(edge_index=torch.tensor([[0], [2]]), y=torch.tensor([1, 1, 0]), num_nodes=3)
    datamodule = SimpleNamespace(
        graph=None, train_dataloader=lambda: [first], val_dataloader=lambda: [second], test_dataloader=lambda: []
    )
    graph = graph_of(datamodule)
    assert graph.num_nodes == 5
    assert graph.edge_index.tolist() == [[0, 1, 2], [1, 0, 4]]
    assert graph.y.tolist() == [0, 1, 1, 1, 0]
    transductive = SimpleNamespace(graph=first)
    assert graph_of(transductive) is first


def test_cli_prints_one_row_per_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[str] = []

    def load(cfg: DictConfig) -> tuple[Data, SimpleNamespace]:
        seen.append(f"{cfg.dataset.name}:{cfg.dataset.split}")
        return Data(edge_index=PATH_EDGES, y=PATH_Y, num_nodes=4), SimpleNamespace(task_type="multiclass", num_outputs=2)

    GlobalHydra.instance().clear()
    argv = ["homophily", "dataset=cora,citeseer", "dataset.split=random", "--csv", "--config-dir", str(CONF)]
    assert main(argv, load=load) == 0
    assert seen == ["cora:random", "citeseer:random"]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("dataset,num_nodes,num_edges,num_classes,edge_homophily")
    assert [line.split(",")[:4] for line in lines[1:]] == [["cora", "4", "3", "2"], ["citeseer", "4", "3", "2"]]


def test_cli_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    GlobalHydra.instance().clear()
    with pytest.raises(SystemExit) as no_dataset:
        main(["homophily", "--config-dir", str(CONF)])
    assert no_dataset.value.code == 2
    with pytest.raises(SystemExit) as unknown:
        main(["homophily", "dataset=not-a-dataset", "--config-dir", str(CONF)])
    assert unknown.value.code == 2
    assert "cora" in capsys.readouterr().err  # Hydra lists the valid options


def test_cli_refuses_a_graph_level_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    GlobalHydra.instance().clear()
    argv = ["homophily", "dataset=cycles", "dataset.num_train=8", "dataset.num_val=4", "dataset.num_test=4"]
    argv += [f"paths.cache_dir={tmp_path}", "--config-dir", str(CONF)]
    assert main(argv) == 1
    assert "homophily needs one class per node" in capsys.readouterr().err


@pytest.mark.real_data
def test_cli_on_real_cora(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not (SHARED_DATA / "Planetoid" / "Cora").is_dir():
        pytest.skip(f"Planetoid/Cora not found under {SHARED_DATA}")
    GlobalHydra.instance().clear()
    argv = [
        "homophily",
        "dataset=cora",
        f"paths.data_dir={SHARED_DATA}",
        f"paths.cache_dir={tmp_path}",
        "--csv",
        "--config-dir",
        str(CONF),
    ]
    assert main(argv) == 0
    header, row = capsys.readouterr().out.splitlines()
    values = dict(zip(header.split(","), row.split(",")))
    # Cora: 2708 nodes, 5278 undirected edges; h_edge 0.81 (PyG), h_adj 0.77 and LI 0.59 (Platonov et al. 2023, Table 1)
    assert (values["num_nodes"], values["num_edges"], values["num_classes"]) == ("2708", "5278", "7")
    assert float(values["edge_homophily"]) == pytest.approx(0.8100, abs=5e-5)
    assert float(values["adjusted_homophily"]) == pytest.approx(0.77, abs=5e-3)
    assert float(values["label_informativeness"]) == pytest.approx(0.59, abs=5e-3)


def test_cli_prints_the_table_and_saves_the_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_run(tmp_path / "runs" / "0", 0.0, 0.3)
    assert main(["memorization", str(tmp_path / "runs"), "--plot", str(tmp_path / "p.png")]) == 0
    assert "| syn-cora | 0 | gcn | best |  | 0 | 30.0 | 0.0 | 50.0 | 25.0 |" in capsys.readouterr().out
    assert (tmp_path / "p.png").read_bytes()[:8] == PNG_MAGIC
    (tmp_path / "empty").mkdir()
    assert main(["memorization", str(tmp_path / "empty")]) == 1
    assert "no completed task=memorization run" in capsys.readouterr().err


def test_help_says_which_analysis_takes_datasets_and_which_directories() -> None:
    text = " ".join(build_parser().format_help().split())
    assert "homophily: Hydra overrides, dataset=<name>[,<name>...] required; memorization: run or multirun directories" in text
    assert "IGB's rank stability of a model set (--public DIR --iid DIR" in text
