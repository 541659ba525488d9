"""graphbench's Hydra sweeper on Optuna (``hydra/sweeper=optuna``): Hydra finds it in the ``hydra_plugins``
namespace package (:mod:`hydra_plugins.graphbench_optuna_sweeper.optuna_sweeper`); the search itself is
:mod:`graphbench.sweep.optuna_search`."""
