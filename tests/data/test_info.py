"""``DatasetInfo``: the facts a DataModule hands on, validated task type and level, and the monitored metric."""

from __future__ import annotations

import pytest

from graphbench.data.info import DatasetInfo, FeatureSpec


def info(task_type: str = "binary", level: str = "graph", metric: str = "ap") -> DatasetInfo:
    return DatasetInfo("toy", level, task_type, 1, metric, True, FeatureSpec("constant"), None)  # type: ignore[arg-type]


def test_the_monitor_is_the_validation_metric() -> None:
    assert info(metric="mae").monitor == "val/mae"
    assert info(metric="hits@50", level="link").monitor == "val/hits@50"


def test_feature_spec_defaults_to_no_width_and_no_cardinalities() -> None:
    assert FeatureSpec("atom") == FeatureSpec("atom", 0, ())
    assert FeatureSpec("categorical", cardinalities=(3, 2)).cardinalities == (3, 2)


@pytest.mark.parametrize(
    ("task_type", "level", "message"),
    [
        ("ranking", "graph", r"^task_type 'ranking' is not one of \('multilabel', 'multiclass', 'binary', 'regression'\)$"),
        ("binary", "edge", r"^level 'edge' is not one of \('graph', 'node', 'link'\)$"),
    ],
)
def test_unknown_task_type_or_level_is_refused_naming_the_valid_ones(task_type: str, level: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        info(task_type=task_type, level=level)
