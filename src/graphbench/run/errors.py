"""Errors that end a run with one clear message instead of a traceback."""


class GraphbenchError(Exception):
    """Base class: the message says what was wrong and how to fix it."""


class ConfigError(GraphbenchError):
    """A config value has the wrong type or an invalid value."""


class DataError(GraphbenchError):
    """Raw data is missing, corrupted or inconsistent."""


class Diverged(GraphbenchError):
    """The training loss (or the validation loss) became NaN or infinite (raised by
    :class:`graphbench.callbacks.divergence.DivergenceGuard`)."""

    def __init__(self, epoch: int, what: str) -> None:
        super().__init__(f"{what} is not finite at epoch {epoch}")
        self.epoch = epoch


class Pruned(GraphbenchError):
    """The pruner of the Optuna search this run is a trial of stopped it after ``epoch`` (raised by the
    train task once the run is tested and recorded; see :class:`graphbench.callbacks.optuna_pruning.OptunaPruning`)."""

    def __init__(self, epoch: int) -> None:
        super().__init__(f"pruned at epoch {epoch}")
        self.epoch = epoch
