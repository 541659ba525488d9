"""Lightning callbacks, built by name from the ``callbacks`` config group (:func:`graphbench.build.callbacks.build_callbacks`).

- :mod:`~graphbench.callbacks.history`: the epoch-by-epoch history and the epoch the best checkpoint kept
- :mod:`~graphbench.callbacks.record_progress`: the run's record kept up to date epoch by epoch
- :mod:`~graphbench.callbacks.last_checkpoint`: the full training state a resumed run continues from
- :mod:`~graphbench.callbacks.rng_state`: the random generators' state in that checkpoint
- :mod:`~graphbench.callbacks.predictions`: the test split's raw predictions
- :mod:`~graphbench.callbacks.resources`: time per epoch and peak memory
- :mod:`~graphbench.callbacks.parameter_budget`: refuses a model larger than its parameter budget
- :mod:`~graphbench.callbacks.divergence`: stops a run whose loss is no longer a number
- :mod:`~graphbench.callbacks.ntk`: the empirical NTK during training and its alignments
- :mod:`~graphbench.callbacks.threads`: torch's thread count for training, chosen at the first batch
- :mod:`~graphbench.callbacks.optuna_pruning`: an Optuna trial's reports to its study, and its pruning
"""
