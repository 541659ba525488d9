"""Report a trial's monitored validation metric to its Optuna study each epoch, and stop the run its
pruner rejects.

Optuna's pruners (median, successive halving, Hyperband; Akiba et al., "Optuna: A Next-generation
Hyperparameter Optimization Framework", KDD 2019, Sec. 4) compare a trial's intermediate values
``v_t`` at step ``t`` with those of the other trials at the same step. Here step ``t`` is the epoch
and ``v_t`` is the best value of the monitored metric over epochs ``0..t``, in the dataset's
direction: the value the run would be tested at if it ended after epoch ``t``. So the last value
reported is the run's ``results.json`` value at its best epoch, and a pruned trial's value in the
study (Optuna takes its last intermediate value) is what its ``results.json`` says too.

Graphbench's own callback rather than optuna-integration's ``PyTorchLightningPruningCallback``: that
one raises ``TrialPruned`` inside ``Trainer.fit``, so a pruned run would end without its test at the
best epoch, its predictions and a recorded status; here the pruner's decision sets
``trainer.should_stop`` (the run ends after that epoch as an early-stopped run does, then is tested
and recorded) and the train task records ``pruned at epoch N``. Under DDP, rank 0 reports and
decides, and broadcasts the decision.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import lightning as L

from graphbench.run.optuna_storage import open_trial
from graphbench.vocabulary.errors import ConfigError

if TYPE_CHECKING:
    import optuna


class OptunaPruning(L.Callback):
    """Reports ``monitor``'s best-so-far value of each validation epoch to trial ``number`` of the
    study ``study_name`` in ``storage`` (:mod:`graphbench.run.optuna_storage`), and stops training
    when ``pruner`` rejects the trial; ``pruned_epoch`` is then that epoch (``None`` otherwise)."""

    def __init__(
        self,
        storage: str,
        study_name: str,
        number: int,
        pruner: optuna.pruners.BasePruner,
        monitor: str,
        higher_is_better: bool,
    ) -> None:
        self.storage = storage
        self.study_name = study_name
        self.number = number
        self.pruner = pruner
        self.monitor = monitor
        self.higher_is_better = higher_is_better
        self.best: float | None = None
        self.pruned_epoch: int | None = None
        self._trial: optuna.Trial | None = None

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        if stage != "fit" or not trainer.is_global_zero or self._trial is not None:
            return
        from optuna.study import StudyDirection

        trial = open_trial(self.storage, self.study_name, self.number, self.pruner)
        directions = trial.study.directions
        wanted = StudyDirection.MAXIMIZE if self.higher_is_better else StudyDirection.MINIMIZE
        if directions != [wanted]:
            raise ConfigError(
                f"the study {self.study_name!r} has directions {[d.name.lower() for d in directions]}, but a pruner "
                f"judges {self.monitor}, which is {wanted.name.lower()}d: set hydra.sweeper.direction={wanted.name.lower()}, "
                "or hydra/sweeper/pruner=none"
            )
        self._trial = trial

    def better(self, value: float) -> bool:
        if self.best is None:
            return True
        return value > self.best if self.higher_is_better else value < self.best

    def on_validation_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if trainer.sanity_checking:
            return
        stop = False
        if trainer.is_global_zero and self._trial is not None:
            value = trainer.callback_metrics.get(self.monitor)
            if value is not None and math.isfinite(float(value)) and self.better(float(value)):
                self.best = float(value)
            if self.best is not None:
                self._trial.report(self.best, step=trainer.current_epoch)
                stop = self._trial.should_prune()
        stop = bool(trainer.strategy.broadcast(stop))
        if stop:
            trainer.should_stop = True
            self.pruned_epoch = trainer.current_epoch

    def state_dict(self) -> dict[str, Any]:
        """The best value so far, in ``last.ckpt``: a resumed trial reports on from where it was."""
        return {"best": self.best}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.best = state_dict.get("best")
