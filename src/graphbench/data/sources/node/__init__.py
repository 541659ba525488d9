"""Sources of node-level datasets: one graph (transductive) or many graphs (inductive)."""
