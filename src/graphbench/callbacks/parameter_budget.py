"""Refuse to train a model that is larger than its parameter budget."""

from __future__ import annotations

import lightning as L

from graphbench.modules.network import count_parameters
from graphbench.vocabulary.errors import ConfigError


class ParameterBudget(L.Callback):
    """Checks at the start of fitting that the model has at most ``max_params`` trainable
    parameters, so that a width fixed by hand cannot silently break a fair comparison."""

    def __init__(self, max_params: int | None) -> None:
        self.max_params = max_params

    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self.max_params is None:
            return
        num_params = count_parameters(pl_module)
        if num_params > self.max_params:
            raise ConfigError(
                f"the model has {num_params:,} parameters, over the budget of {self.max_params:,}. "
                "Let the budget solve the width (model.hidden_dim is then ignored) or choose budget=none."
            )
