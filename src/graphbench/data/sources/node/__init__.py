"""Sources of node-level datasets: one graph (transductive: :mod:`~graphbench.data.sources.node.planetoid`,
:mod:`~graphbench.data.sources.node.geom_gcn`, :mod:`~graphbench.data.sources.node.wikics`,
:mod:`~graphbench.data.sources.node.ogbn`, :mod:`~graphbench.data.sources.node.saint_sets`,
:mod:`~graphbench.data.sources.node.syn_cora`, :mod:`~graphbench.data.sources.node.syn_homophily`,
:mod:`~graphbench.data.sources.node.sbm_large`) or many graphs (inductive:
:mod:`~graphbench.data.sources.node.sbm_patterns`, :mod:`~graphbench.data.sources.node.lrgb_superpixels`)."""
