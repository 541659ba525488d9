"""graphbench: fair, reproducible benchmarking of graph neural networks (Hydra + Lightning + PyG)."""

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
