"""The run's lifecycle: its frame (:mod:`~graphbench.run.frame`: directory, record, signals,
provenance), :mod:`~graphbench.run.record`, :mod:`~graphbench.run.provenance`,
:mod:`~graphbench.run.run_dir`, :mod:`~graphbench.run.signals`,
:mod:`~graphbench.run.files` (atomic writes), :mod:`~graphbench.run.checkpoints`,
:mod:`~graphbench.run.loggers`, :mod:`~graphbench.run.naming`, the DDP launcher
(:mod:`~graphbench.run.distributed`), CPU :mod:`~graphbench.run.threads` and
:mod:`~graphbench.run.processes`, the CLI plumbing (:mod:`~graphbench.run.cli`,
:mod:`~graphbench.run.config_errors`, :mod:`~graphbench.run.recipe`), Hydra callbacks
(:mod:`~graphbench.run.hydra_callbacks`), and the Optuna study a search's trial reports to
(:mod:`~graphbench.run.optuna_storage`)."""
