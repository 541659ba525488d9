"""The tasks a config runs (``task=train|eval|memorization|mia|igb|iid_eval|validutil``): thin functions over :mod:`graphbench.build` and the run frame."""
