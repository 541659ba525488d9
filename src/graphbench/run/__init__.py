"""The run's lifecycle: its frame (directory, record, signals, provenance), loggers, the DDP launcher, the CLI plumbing and Hydra callbacks."""
