"""``dataset_metric``: the swept metric and its direction, read from a dataset node of either layout;
``compose_job``: a mistyped override in run.py's one line."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from graphbench.sweep.compose import compose_job, dataset_metric, hydra_conf
from graphbench.sweep.wandb import SweepError
from tests.paths import CONF


@pytest.mark.parametrize(
    ("dataset", "expected"),
    [
        ({"name": "a", "metric": "ap", "higher_is_better": True}, ("val/ap", True)),
        ({"name": "b", "source": {"metric": "mae", "higher_is_better": False}}, ("val/mae", False)),
        (
            {"name": "c", "source": "a string describing where the data comes from", "metric": "f1", "higher_is_better": 1},
            ("val/f1", True),
        ),
    ],
)
def test_dataset_metric_reads_either_layout(dataset: dict, expected: tuple[str, bool]) -> None:
    assert dataset_metric(OmegaConf.create(dataset)) == expected


def test_dataset_without_metric_is_an_error() -> None:
    with pytest.raises(SweepError, match="dataset 'd' states no metric and higher_is_better"):
        dataset_metric(OmegaConf.create({"name": "d", "source": {"metric": "ap"}}))


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("model=gcnx", "model=gcnx: no such model (did you mean gcn or gcnii?); --help lists every group's options"),
        ("model.hiden=1", "model.hiden: no such key (did you mean model.hidden_dim"),
    ],
)
def test_a_mistyped_override_is_run_pys_one_line(override: str, message: str) -> None:
    with hydra_conf(CONF), pytest.raises(SweepError) as info:
        compose_job([override])
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
