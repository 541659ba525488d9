"""Config plumbing: :mod:`~graphbench.config.instantiate` (instantiating config nodes, errors naming
the node), :mod:`~graphbench.config.schema` (the typed schemas of the top-level keys and of the model,
head, pe, budget, trainer, optimizer and speedups nodes), :mod:`~graphbench.config.checks` (a composed
config held against the schemas, and checks across groups), :mod:`~graphbench.config.resolvers`
(OmegaConf resolvers)."""
