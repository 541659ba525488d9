"""``dataset_metric``: the swept metric and its direction, read from a dataset node of either layout."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from graphbench.sweep.compose import dataset_metric
from graphbench.sweep.wandb import SweepError


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
