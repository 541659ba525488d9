"""Config plumbing: instantiating config nodes, checks across groups, OmegaConf resolvers."""
