"""The width solver on models whose parameter count is known in closed form; and every model fits every parameter
budget on Peptides-func's feature spec, and fills >= 95% of it.

The width is solved exactly as :func:`graphbench.tasks.train.train` solves it (``network_builder`` on the
composed config, then :func:`~graphbench.modules.budget.solve_width`), with two speed-ups that cannot change
the answer: models are built on the ``meta`` device (no memory, no initialisation cost), and the
search range is capped at 512 (the largest width that fits is far below; the binary search returns
the largest width under the budget whatever the range that contains it). The modules a search
builds are cached per width and shared by both budgets.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
import torch
from omegaconf import DictConfig
from torch import nn

from graphbench.build.model import network_builder
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.budget import solve_width
from graphbench.modules.network import count_parameters
from graphbench.vocabulary.errors import ConfigError
from tests.paths import CONF

PEPTIDES_FUNC = DatasetInfo(
    name="peptides-func",
    level="graph",
    task_type="multilabel",
    num_outputs=10,
    metric="ap",
    higher_is_better=True,
    node_features=FeatureSpec("atom"),
    edge_features=FeatureSpec("bond"),
)
MODELS = ("gcn", "gine", "gatedgcn", "gin", "gat", "gatv2", "sage", "monet", "gps", "mlp")
BUDGETS = {"100k": 100_000, "500k": 500_000}
PES = ("none", "rwse")
MAX_WIDTH = 512
MIN_FILL = 0.95


def meta_builder(cfg: DictConfig) -> Callable[[int], nn.Module]:
    make = network_builder(cfg, PEPTIDES_FUNC)

    @functools.cache
    def build(hidden_dim: int) -> nn.Module:
        with torch.device("meta"):
            return make(hidden_dim)

    return build


@pytest.mark.parametrize("pe", PES)
@pytest.mark.parametrize("model", MODELS)
def test_solved_width_fills_budget(compose_cfg: Callable[..., DictConfig], model: str, pe: str) -> None:
    if not (CONF / "pe" / f"{pe}.yaml").is_file():
        pytest.skip(f"conf/pe/{pe}.yaml not written yet")
    cfg = compose_cfg([f"model={model}", f"pe={pe}", "budget=100k"])
    build = meta_builder(cfg)
    multiple = int(cfg.model.width_multiple)
    for budget_name, max_params in BUDGETS.items():
        solved = solve_width(build, max_params, multiple, max_width=MAX_WIDTH)
        where = f"{model}+{pe} @ {budget_name}: hidden_dim={solved.hidden_dim}, {solved.num_params:,} params"
        assert solved.hidden_dim % multiple == 0, where
        assert solved.hidden_dim < MAX_WIDTH, where
        assert solved.num_params <= max_params, where
        assert solved.num_params >= MIN_FILL * max_params, f"{where} fills under {MIN_FILL:.0%} of the budget"
        assert count_parameters(build(solved.hidden_dim + multiple)) > max_params, where


def test_meta_build_counts_like_a_real_build(compose_cfg: Callable[..., DictConfig]) -> None:
    cfg = compose_cfg(["model=gps", "pe=none"])
    real = network_builder(cfg, PEPTIDES_FUNC)(8)
    assert count_parameters(meta_builder(cfg)(8)) == count_parameters(real)


def two_layer(width: int) -> nn.Module:
    # P(d) = (10 d + d) + (d * 3 + 3) = 14 d + 3
    return nn.Sequential(nn.Linear(10, width), nn.Linear(width, 3))


def quadratic(width: int) -> nn.Module:
    # P(d) = d^2 + d
    return nn.Linear(width, width)


def test_linear_count_exact_answer() -> None:
    solved = solve_width(two_layer, 1000)
    assert (solved.hidden_dim, solved.num_params) == (71, 14 * 71 + 3)  # 14*72+3 = 1011 > 1000


def test_quadratic_count_and_width_multiple() -> None:
    solved = solve_width(quadratic, 10_000, width_multiple=8)
    assert solved.hidden_dim == 96 and solved.num_params == 96 * 96 + 96  # 104^2+104 = 10920 > 10000


def test_budget_exactly_met() -> None:
    assert solve_width(two_layer, 14 * 50 + 3).hidden_dim == 50


def test_min_width_is_the_narrowest_candidate() -> None:
    """A model that cannot be built narrower (a concatenated PE of 28 channels) is never built narrower."""

    def concat_pe(width: int) -> nn.Module:
        if width <= 28:
            raise ValueError("no channel beside the PE")
        return two_layer(width)

    assert solve_width(concat_pe, 1000, min_width=29).hidden_dim == 71
    with pytest.raises(ConfigError, match="hidden_dim=32"):
        solve_width(concat_pe, 10, width_multiple=4, min_width=29)


def test_too_small_budget_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="narrowest model"):
        solve_width(two_layer, 10)


def test_candidates_are_built_without_memory() -> None:
    sizes = []

    def recording(width: int) -> nn.Module:
        module = quadratic(width)
        sizes.append((width, module.weight.device.type))
        return module

    solve_width(recording, 10_000_000)
    assert all(device == "meta" for _, device in sizes)
    assert max(w for w, _ in sizes) <= 2 * 3162  # never more than twice the answer
