"""The tasks a config runs (``task=train|eval|memorization|mia|igb|iid_eval|validutil``): thin functions
over :mod:`graphbench.build` and the run frame: :mod:`~graphbench.tasks.train`,
:mod:`~graphbench.tasks.evaluate` (``eval``), :mod:`~graphbench.tasks.memorization`,
:mod:`~graphbench.tasks.mia`, :mod:`~graphbench.tasks.igb` (``igb``, ``iid_eval``),
:mod:`~graphbench.tasks.validutil`; :mod:`~graphbench.tasks.ddp_worker` runs a local DDP run's other
ranks."""
