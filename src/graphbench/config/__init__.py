"""Config plumbing: :mod:`~graphbench.config.instantiate` (instantiating config nodes, errors naming
the node), :mod:`~graphbench.config.checks` (checks across groups), :mod:`~graphbench.config.resolvers`
(OmegaConf resolvers)."""
