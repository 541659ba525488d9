"""graphbench.build.model: the network's width and parameter count, and the compilation's options,
static shapes where the built DataModule pads its batches."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from omegaconf import DictConfig

from graphbench.build.data import build_datamodule
from graphbench.build.model import compile_options, network_width, sized_network
from graphbench.vocabulary.errors import ConfigError


def test_compile_options_follow_the_compile_mode_and_the_padding(compose_cfg: Callable[..., DictConfig]) -> None:
    assert compile_options(compose_cfg([]), pads_batches=False) == {"static_shapes": False, "mode": "default"}
    chosen = compose_cfg(["model.compile_mode=reduce-overhead"])
    assert compile_options(chosen, pads_batches=True) == {"static_shapes": True, "mode": "reduce-overhead"}
    with pytest.raises(
        ConfigError, match=r"^model.compile_mode=fast is not a torch.compile mode; valid: default, reduce-overhead, "
    ):
        compile_options(compose_cfg(["model.compile_mode=fast"]), pads_batches=False)


def test_the_datamodule_says_whether_it_pads(compose_cfg: Callable[..., DictConfig]) -> None:
    padded = compose_cfg(["dataset=peptides-func", "dataset.pad_to=buckets"])
    assert build_datamodule(padded).pads_batches is True
    assert build_datamodule(compose_cfg(["dataset=peptides-func"])).pads_batches is False
    assert build_datamodule(compose_cfg(["dataset=cora"])).pads_batches is False  # one graph: the sampler's batches


def test_the_width_is_the_models_or_solved_under_the_budget(compose_cfg: Callable[..., DictConfig]) -> None:
    cfg = compose_cfg(["model=gcn", "model.hidden_dim=24", "budget=none"])
    info = build_datamodule(cfg).info
    sized = sized_network(cfg, info)
    assert sized.hidden_dim == 24 == network_width(cfg, sized.make)
    budgeted = compose_cfg(["model=gcn", "budget=100k", "budget.max_params=5000"])
    solved = sized_network(budgeted, info)
    assert (
        solved.num_params
        <= 5000
        < sized_network(compose_cfg(["model=gcn", f"model.hidden_dim={solved.hidden_dim + 1}", "budget=none"]), info).num_params
    )
