"""Tests for graphbench.report.collect: finding, validating, grouping and labelling runs."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from graphbench.report.collect import (
    ReportInputError,
    Run,
    collect,
    find_result_files,
    fold_names,
    grouping_items,
    make_labels,
)
from tests.report._runs import write_run


def config(out: Path, seed: int = 0, model: str = "gcn", head: str = "mlp2", dataset: str = "zinc") -> dict[str, Any]:
    """A resolved config whose run-specific values all differ per run."""
    return {
        "seed": seed,
        "dataset": {"name": dataset, "split_seed": 7, "seed": seed},
        "model": {"name": model, "num_layers": 4 if model == "gcn" else 6},
        "head": {"name": head},
        "trainer": {"max_epochs": 10, "default_root_dir": str(out)},
        "callbacks": {"ckpt": {"dirpath": f"{out}/checkpoints", "monitor": "val/mae"}, "plot": {"file": f"{out}/a.png"}},
        "logger": {"wandb": {"name": f"run-{seed}"}},
        "paths": {"output_dir": str(out), "data_dir": "/data"},
        "hydra": {"job": {"num": seed}},
        "_internal": 1,
    }


def write(path: Path, record: dict[str, Any] | str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    text = record if isinstance(record, str) else json.dumps(record)
    (path / "results.json").write_text(text)


def completed(out: Path, seed: int, test: float, **kwargs: Any) -> dict[str, Any]:
    return {
        "status": "completed",
        "config": config(out, seed, **kwargs),
        "metric": "mae",
        "higher_is_better": False,
        "metrics": {"test/mae": test, "val/mae": test},
    }


def test_grouping_items_drops_replicate_and_run_specific_keys(tmp_path: Path) -> None:
    items = grouping_items(config(tmp_path / "run3", seed=3))
    assert items == {
        "dataset.name": '"zinc"',
        "dataset.split_seed": "7",
        "model.name": '"gcn"',
        "model.num_layers": "4",
        "head.name": '"mlp2"',
        "trainer.max_epochs": "10",
        "callbacks.ckpt.monitor": '"val/mae"',
    }
    assert grouping_items(config(tmp_path / "run9", seed=9)) == items


def test_labels_show_names_and_unexplained_keys_only() -> None:
    def items(model: str, head: str, lr: float) -> dict[str, str]:
        layers = "4" if model == "gcn" else "6"  # a function of the model name: hidden
        return {
            "dataset.name": '"zinc"',
            "model.name": json.dumps(model),
            "model.num_layers": layers,
            "head.name": json.dumps(head),
            "optimizer.lr": json.dumps(lr),
        }

    grid = [
        items("gcn", "linear", 0.001),
        items("gcn", "mlp2", 0.001),
        items("gine", "linear", 0.001),
        items("gine", "mlp2", 0.001),
    ]
    labels, fixed = make_labels(grid)
    assert labels == ["model=gcn head=linear", "model=gcn head=mlp2", "model=gine head=linear", "model=gine head=mlp2"]
    assert fixed == "dataset=zinc"

    sweep = [items("gcn", "mlp2", 0.001), items("gcn", "mlp2", 0.01), items("gine", "mlp2", 0.001)]
    labels, fixed = make_labels(sweep)
    assert labels == ["model=gcn optimizer.lr=0.001", "model=gcn optimizer.lr=0.01", "model=gine optimizer.lr=0.001"]
    assert fixed == "dataset=zinc head=mlp2"

    extra = [{"model.name": '"gcn"'}, {"model.name": '"gcn"', "model.residual": "true"}]
    assert make_labels(extra)[0] == ["model.residual=<absent>", "model.residual=true"]
    assert make_labels([{"model.name": '"gcn"'}])[0] == ["(all runs)"]


def test_find_result_files_names_the_bad_path(tmp_path: Path) -> None:
    with pytest.raises(ReportInputError, match=f"{tmp_path / 'missing'}: no such directory"):
        find_result_files([tmp_path / "missing"])
    (tmp_path / "empty" / "0").mkdir(parents=True)
    with pytest.raises(ReportInputError, match=f"{tmp_path / 'empty'}: no results.json"):
        find_result_files([tmp_path / "empty"])
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ReportInputError, match="not a directory"):
        find_result_files([tmp_path / "file.txt"])


def test_find_result_files_is_recursive_natural_and_deduplicated(tmp_path: Path) -> None:
    for job in ["10", "2", "0"]:
        write(tmp_path / "sweep" / job, {"status": "completed"})
    write(tmp_path / "sweep" / "nested" / "1", {"status": "completed"})
    files = find_result_files([tmp_path / "sweep", tmp_path / "sweep" / "2"])
    assert [f.parent.relative_to(tmp_path / "sweep").as_posix() for f in files] == ["0", "2", "10", "nested/1"]


def test_collect_groups_over_seeds_and_keeps_every_failed_run(tmp_path: Path) -> None:
    root = tmp_path / "multirun"
    for job, (model, seed, test) in enumerate([("gcn", 0, 0.30), ("gcn", 1, 0.32), ("gine", 0, 0.25), ("gine", 1, 0.27)]):
        write(root / str(job), completed(root / str(job), seed, test, model=model))
    write(root / "4", {"status": "failed: RuntimeError: CUDA out of memory", "config": config(root / "4", 2)})
    write(root / "5", {"status": "failed: KeyError: 'x'"})  # failed before the config was saved
    no_test = completed(root / "6", 3, 0.5)
    del no_test["metrics"]["test/mae"]
    write(root / "6", no_test)
    write(root / "8", "{not json")
    write(root / "9", {"status": "failed: ValueError: boom", "config": config(root / "9", 0, model="gat")})

    collection = collect([root])
    (block,) = collection.blocks
    assert (block.dataset, block.metric, block.higher_is_better) == ("zinc", "mae", False)
    assert block.fixed == "dataset=zinc head=mlp2"
    assert [g.label for g in block.groups] == ["model=gcn", "model=gine"]
    assert [[r.seed for r in g.runs] for g in block.groups] == [[0, 1], [0, 1]]
    assert [r.value("test/mae") for r in block.groups[0].runs] == [0.30, 0.32]

    failed = {f.path.name: (f.status, f.label) for f in collection.failed}
    assert failed["4"] == ("failed: RuntimeError: CUDA out of memory", "model=gcn")
    assert failed["5"] == ("failed: KeyError: 'x'", None)
    assert failed["6"] == ("completed, but 'test/mae' is missing or not a finite number", "model=gcn")
    assert failed["8"][0].startswith("failed: unreadable results.json (JSONDecodeError")
    assert failed["9"] == ("failed: ValueError: boom", "dataset=zinc model=gat head=mlp2")
    assert sorted(failed) == ["4", "5", "6", "8", "9"]


def test_collect_flags_non_finite_metric(tmp_path: Path) -> None:
    record = completed(tmp_path / "0", 0, 0.5)
    record["metrics"]["test/mae"] = math.nan  # json writes NaN, which Python reads back
    write(tmp_path / "0", record)
    collection = collect([tmp_path])
    assert collection.blocks == []
    assert collection.failed[0].status == "completed, but 'test/mae' is missing or not a finite number"


def test_collect_separates_datasets_into_blocks(tmp_path: Path) -> None:
    write(tmp_path / "0", completed(tmp_path / "0", 0, 0.3, dataset="zinc"))
    write(tmp_path / "1", completed(tmp_path / "1", 0, 0.4, dataset="aqsol"))
    blocks = collect([tmp_path]).blocks
    assert [(b.dataset, [g.label for g in b.groups]) for b in blocks] == [("zinc", ["(all runs)"]), ("aqsol", ["(all runs)"])]


def test_grouping_items_drop_the_runs_replicate_keys_and_run_name(tmp_path: Path) -> None:
    cfg = config(tmp_path / "run1", seed=1)
    cfg.update({"run_group": "model=gcn", "run_name": "model=gcn,seed=1", "tag": "s1", "aug": {"seed_list": [1, 2]}})
    assert grouping_items(cfg, ["aug", "seed", "tag"]) == {
        "dataset.name": '"zinc"',
        "dataset.split_seed": "7",
        "model.name": '"gcn"',
        "model.num_layers": "4",
        "head.name": '"mlp2"',
        "trainer.max_epochs": "10",
        "callbacks.ckpt.monitor": '"val/mae"',
        "run_group": '"model=gcn"',
    }
    assert grouping_items(cfg)["tag"] == '"s1"'  # not declared seed-derived: kept


def test_collect_groups_seed_derived_keys_together(tmp_path: Path) -> None:
    root = tmp_path / "multirun"
    for job, (model, seed) in enumerate([("gcn", 0), ("gcn", 1), ("gine", 0), ("gine", 1)]):
        record = completed(root / str(job), seed, 0.3 + job / 100, model=model)
        record["config"].update(
            {"run_group": f"model={model}", "run_name": f"model={model},seed={seed}", "tag": f"{model}-s{seed}"}
        )
        record["replicate_keys"] = ["run_name", "seed", "tag"]
        write(root / str(job), record)
    (block,) = collect([root]).blocks
    assert [g.label for g in block.groups] == ["model=gcn", "model=gine"]  # run_group follows model.name: hidden
    assert [[r.seed for r in g.runs] for g in block.groups] == [[0, 1], [0, 1]]


def test_collect_groups_older_results_by_ignoring_run_name(tmp_path: Path) -> None:
    for seed in (0, 1):
        record = completed(tmp_path / str(seed), seed, 0.3)
        record["config"]["run_name"] = f"zinc-gcn-mlp2-none-none-seed{seed}"  # no replicate_keys in the file
        write(tmp_path / str(seed), record)
    (block,) = collect([tmp_path]).blocks
    assert [(g.label, [r.seed for r in g.runs]) for g in block.groups] == [("(all runs)", [0, 1])]


def test_labels_show_run_group_only_when_nothing_else_tells_groups_apart() -> None:
    def items(lr: float, group: str) -> dict[str, str]:
        return {"model.name": '"gcn"', "optimizer.lr": json.dumps(lr), "run_group": json.dumps(group)}

    swept = [items(0.01, "optimizer.lr=0.01"), items(0.001, "optimizer.lr=0.001")]
    assert make_labels(swept)[0] == ["optimizer.lr=0.01", "optimizer.lr=0.001"]
    renamed = [items(0.01, "ablation-a"), items(0.01, "ablation-b")]
    assert make_labels(renamed)[0] == ["run_group=ablation-a", "run_group=ablation-b"]
    mixed = [items(0.01, "a"), items(0.01, "b"), items(0.001, "b")]
    assert make_labels(mixed)[0] == [
        "optimizer.lr=0.01 run_group=a",
        "optimizer.lr=0.01 run_group=b",
        "optimizer.lr=0.001 run_group=b",
    ]


def mutag_folds(root: Path) -> Path:
    """model=gcn,mlp x dataset.split_index=0,1,2 x seed=0,1, one job directory each."""
    job = 0
    for model in ("gcn", "mlp"):
        for fold in range(3):
            for seed in range(2):
                write_run(root / str(job), dataset="mutag", model=model, seed=seed, fold=fold, test=0.5 + 0.01 * job)
                job += 1
    return root


def test_collect_pools_folds_and_seeds_of_a_configuration(tmp_path: Path) -> None:
    (block,) = collect([mutag_folds(tmp_path)]).blocks
    assert [group.label for group in block.groups] == ["model=gcn", "model=mlp"]
    gcn = block.groups[0]
    assert [(run.fold, run.seed) for run in gcn.runs] == [
        ("split_index=0", 0),
        ("split_index=0", 1),
        ("split_index=1", 0),
        ("split_index=1", 1),
        ("split_index=2", 0),
        ("split_index=2", 1),
    ]
    # the fold, what interpolates it and the run_group spelling it are not configuration
    assert not any("split_index" in key or key == "run_group" for key in gcn.items)


def test_collect_by_fold_keeps_one_group_per_fold(tmp_path: Path) -> None:
    (block,) = collect([mutag_folds(tmp_path)], by_fold=True).blocks
    # dataset.source.split_index follows dataset.split_index and run_group follows both: neither is shown
    assert [group.label for group in block.groups] == [
        f"dataset.split_index={fold} model={model}" for model in ("gcn", "mlp") for fold in range(3)
    ]
    assert all([run.seed for run in group.runs] == [0, 1] for group in block.groups)


def test_a_dataset_declares_further_fold_keys(tmp_path: Path) -> None:
    config_0 = {"seed": 0, "dataset": {"name": "d", "fold_key": "subgraph", "subgraph": 0, "split_index": 0}}
    config_1 = {"seed": 0, "dataset": {"name": "d", "fold_key": ["subgraph"], "subgraph": 1, "split_index": 0}}
    assert fold_names(config_0) == ("split_index", "subgraph") == fold_names(config_1)
    assert fold_names({"dataset": {"name": "d"}}) == ("split_index",)
    assert grouping_items(config_0, by_fold=False) == {"dataset.name": '"d"', "dataset.fold_key": '"subgraph"'}
    assert grouping_items(config_0)["dataset.subgraph"] == "0"  # by_fold keeps the fold
    with pytest.raises(ValueError, match=r"dataset.fold_key=3: expected a key name below dataset or a list of them"):
        fold_names({"dataset": {"fold_key": 3}})
    bad = completed(tmp_path / "bad", 0, 0.5)
    bad["config"]["dataset"]["fold_key"] = 3
    write(tmp_path / "bad", bad)
    write(tmp_path / "good", completed(tmp_path / "good", 0, 0.5))
    collection = collect([tmp_path])
    assert [failed.status for failed in collection.failed] == [
        "completed, but dataset.fold_key=3: expected a key name below dataset or a list of them"
    ]


#: what each task writes to results.json (metric, monitor, higher_is_better, score, metrics), as in graphbench.tasks
TASK_RECORDS: dict[str, tuple[str, str, bool, str | None, dict[str, float]]] = {
    "train": ("accuracy", "val/accuracy", True, None, {"test/accuracy": 0.8, "val/accuracy": 0.7}),
    "eval": ("accuracy", "val/accuracy", True, None, {"test/accuracy": 0.8, "val/accuracy": 0.7, "test/loss": 0.5}),
    "igb": ("accuracy", "val/accuracy", True, None, {"test/accuracy": 0.8, "val/accuracy": 0.7, "selection/test_accuracy": 0.79}),
    "iid_eval": ("accuracy", "val/accuracy", True, None, {"test/accuracy": 0.8, "test/accuracy_std": 0.01, "val/accuracy": 0.7}),
    "validutil": (
        "accuracy",
        "val/accuracy",
        True,
        None,
        {"test/accuracy": 0.8, "val/accuracy": 0.9, "validutil/inflation": 0.04},
    ),
    "memorization": (
        "memorization_rate",
        "memorization/rate",
        False,
        "memorization/rate",
        {"memorization/rate": 0.1, "test/accuracy_f": 0.6},
    ),
    "mia": ("auc", "mia_auc", True, "mia_auc", {"mia_auc": 0.55, "test/accuracy": 0.6}),
}


@pytest.mark.parametrize("task", sorted(TASK_RECORDS))
def test_every_tasks_record_enters_a_table(tmp_path: Path, task: str) -> None:
    metric, monitor, higher, score, metrics = TASK_RECORDS[task]
    cfg = {**config(tmp_path, dataset="cora"), "task": {"name": task}}
    record = {"status": "completed", "config": cfg, "metric": metric, "monitor": monitor, "higher_is_better": higher}
    write(tmp_path / "run", {**record, "score": score, "metrics": metrics})
    collection = collect([tmp_path])
    assert collection.failed == []
    (block,) = collection.blocks
    expected = score or f"test/{metric}"
    assert (block.test_key, block.val_key) == (expected, f"val/{metric}" if score is None else None)
    assert block.groups[0].runs[0].value(block.test_key) == metrics[expected]


def test_a_score_key_that_is_missing_is_a_failed_run(tmp_path: Path) -> None:
    record = {"status": "completed", "config": config(tmp_path), "metric": "auc", "higher_is_better": True}
    write(tmp_path / "run", {**record, "score": "mia_auc", "metrics": {"test/auc": 0.5}})
    (failed,) = collect([tmp_path]).failed
    assert failed.status == "completed, but 'mia_auc' is missing or not a finite number"


def test_the_trials_of_an_optuna_search_group_by_their_config_and_pruned_ones_stay_out(tmp_path: Path) -> None:
    """``optuna_trial`` (the trial a run was) never tells configurations apart; a pruned trial is listed
    with its group's label and never enters the statistics."""
    root = tmp_path / "sweep"
    trial = {"storage": "/s/optuna.journal", "study_name": "cycles-gine", "pruner": None}
    for number, (seed, test) in enumerate([(0, 0.30), (1, 0.34)]):
        record = completed(root / str(number), seed, test)
        record["config"]["optuna_trial"] = {**trial, "number": number}
        write(root / str(number), record)
    pruned = completed(root / "2", 2, 0.9)
    pruned["status"] = "pruned at epoch 1"
    pruned["config"]["optuna_trial"] = {**trial, "number": 2}
    write(root / "2", pruned)

    collection = collect([root])
    (block,) = collection.blocks
    (group,) = block.groups
    assert [r.value("test/mae") for r in group.runs] == [0.30, 0.34]  # one configuration, two replicates
    assert [(f.path.name, f.status) for f in collection.failed] == [("2", "pruned at epoch 1")]


@pytest.mark.parametrize(
    ("trainer", "limits"),
    [
        ({}, ()),
        ({"limit_val_batches": None, "limit_test_batches": 1.0}, ()),
        ({"limit_test_batches": 1}, ("trainer.limit_test_batches=1",)),  # an integer: one batch
        (
            {"limit_val_batches": 0.25, "limit_test_batches": 2},
            ("trainer.limit_val_batches=0.25", "trainer.limit_test_batches=2"),
        ),
        ({"limit_train_batches": 1}, ()),  # training on part of the split changes the run, not how it is scored
    ],
)
def test_evaluation_limits_name_the_splits_seen_in_part(trainer: dict, limits: tuple[str, ...]) -> None:
    run = Run(Path("r"), "completed", {"trainer": trainer}, None)
    assert run.evaluation_limits == limits
