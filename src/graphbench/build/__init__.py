"""From a composed config to objects: the only room that knows which config group feeds which
constructor. Every builder takes the config from its caller, never from a global, and builds through
:func:`graphbench.config.instantiate.build`, which names the config node in every error.

- :mod:`~graphbench.build.data`: the DataModule of ``dataset`` by its schema, with the ``sampler``
  group's sampler and the cached transform (``transform``, then ``pe``'s)
- :mod:`~graphbench.build.model`: the network of ``model``, ``head``, ``normalization`` and ``pe``,
  its width solved under ``budget``, seeded, loaded and compiled into the task module
- :mod:`~graphbench.build.task_module`: the task module of ``dataset.module``, its loss, the
  ``optimizer``, the ``scheduler`` and the model's consistency term
- :mod:`~graphbench.build.callbacks`: the callbacks of ``callbacks`` (and an Optuna trial's pruning)
- :mod:`~graphbench.build.loggers`: the loggers of ``logger``
- :mod:`~graphbench.build.trainer`: the Trainer of ``trainer``
- :mod:`~graphbench.build.task`: the function of ``task``
- :mod:`~graphbench.build.search`: the Optuna sampler and pruner of ``hydra/sweeper=optuna``
"""
