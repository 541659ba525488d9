"""graphbench: fair, reproducible benchmarking of graph neural networks (Hydra + Lightning + PyG).

Its rooms, top first (the order and the import rules: docs/architecture.md): ``__main__`` (the
``graphbench`` command's entry point) and :mod:`~graphbench.main` (compose the config, run its task);
:mod:`~graphbench.sweep` and :mod:`~graphbench.reproduce` (searches, a paper's table);
:mod:`~graphbench.tasks`; :mod:`~graphbench.analysis`; :mod:`~graphbench.report`;
:mod:`~graphbench.build` (config -> objects); :mod:`~graphbench.callbacks`; :mod:`~graphbench.modules`;
:mod:`~graphbench.metrics`; :mod:`~graphbench.data`; :mod:`~graphbench.transforms`;
:mod:`~graphbench.speedups`; :mod:`~graphbench.config`; :mod:`~graphbench.run`;
:mod:`~graphbench.vocabulary` (the errors and split names every room shares). The YAML files are the
package ``graphbench.conf``."""

from graphbench.run import threads as _threads

# before anything imports torch, whose OpenMP runtime reads the wait policy once, when it loads
_threads.set_process_wait_policy(_threads.prepare_process())

import warnings  # noqa: E402

# conf/hydra/launcher/submitit_{local,slurm}.yaml deliberately share their names with the configs that
# hydra-submitit-launcher registers, so that `hydra/launcher=submitit_slurm` gives graphbench's defaults;
# Hydra 1.3 then validates each file against the plugin's schema (a typo fails early) and warns that
# this matching is deprecated. The files set every key themselves, so they work without it too.
warnings.filterwarnings(
    "ignore", message=r"\s*'hydra/launcher/submitit_(local|slurm)' is validated against ConfigStore schema", category=UserWarning
)

from graphbench.config.resolvers import register_resolvers  # noqa: E402

register_resolvers()  # ${gb.first_existing_dir:...}, which paths.data_dir's default uses (conf/paths/default.yaml)
