"""Hyperparameter sweeps run by other tools than Hydra's own sweepers.

``python -m graphbench.sweep wandb <overrides | hparams_search=NAME>`` writes a W&B sweep configuration
whose runs are ``run.py`` jobs (see ``docs/cluster.md``):

- :mod:`graphbench.sweep.wandb`: Hydra's sweep syntax as W&B parameters, the sweep dict, W&B's validator;
- :mod:`graphbench.sweep.compose`: what composing ``conf/`` says: config groups, an hparams_search
  file's search space, the dataset's metric and direction;
- :mod:`graphbench.sweep.__main__`: the command line.

Optuna needs nothing here: ``python run.py -m hparams_search=cycles_optuna`` (``conf/hparams_search/``).
"""
