"""Errors that end a run with one clear message instead of a traceback."""

from __future__ import annotations


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


class ArgumentError(ConfigError, ValueError):
    """An argument has a value that its class or function refuses. The message begins with the argument's
    name as its owner knows it (``pad_to='xyz' is not one of ['none', 'buckets']``), never a config path:
    the owner does not know which config node it was built from. An object that passes an argument on to
    another names its own argument in front (:meth:`under`), and whoever builds the object from a config
    node puts the node's path in front (:meth:`at`, done by :func:`graphbench.config.instantiate.build`):
    ``dataset.pad_to='xyz' is not one of ['none', 'buckets']``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        #: the argument the message begins with
        self.argument: str = message.split("=")[0].split(" ")[0].split(".")[0]

    def under(self, argument: str) -> ArgumentError:
        """This error as the owner of ``argument`` (the object this error's owner was built from) says it."""
        return ArgumentError(f"{argument}.{self}")

    def at(self, path: str) -> ConfigError:
        """This error of an object built from the config node at ``path`` (``dataset``, ``model.layer``)."""
        return ConfigError(f"{path}.{self}")
