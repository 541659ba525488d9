"""Hyperparameter sweeps: graphbench's Optuna search, and W&B sweeps run by W&B's agent.

``python run.py -m hparams_search=cycles_optuna`` (or ``hydra/sweeper=optuna``) runs an Optuna search
through Hydra's sweeper plugin ``hydra_plugins.graphbench_optuna_sweeper`` (see ``docs/cluster.md``):

- :mod:`graphbench.sweep.optuna_search`: ask/tell batches through the launcher, trials claimed by number
  up to ``n_trials`` across workers, each trial told what its ``results.json`` says, the best trial;
- :mod:`graphbench.sweep.search_space`: Hydra's sweep syntax as Optuna distributions, a trial's overrides.

``python -m graphbench.sweep wandb <overrides | hparams_search=NAME>`` writes a W&B sweep configuration
whose runs are ``run.py`` jobs:

- :mod:`graphbench.sweep.wandb`: Hydra's sweep syntax as W&B parameters, the sweep dict, W&B's validator;
- :mod:`graphbench.sweep.compose`: what composing ``conf/`` says: config groups, an hparams_search
  file's search space, the dataset's metric and direction;
- :mod:`graphbench.sweep.__main__`: the command line.
"""
