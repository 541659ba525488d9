"""Sources of graph-level datasets: molecules (:mod:`~graphbench.data.sources.graph.zinc`,
:mod:`~graphbench.data.sources.graph.aqsol`, :mod:`~graphbench.data.sources.graph.ogbg`,
:mod:`~graphbench.data.sources.graph.peptides`), TU (:mod:`~graphbench.data.sources.graph.tudataset`),
superpixel images (:mod:`~graphbench.data.sources.graph.benchmarking_superpixels`), generated graphs
(:mod:`~graphbench.data.sources.graph.csl`, :mod:`~graphbench.data.sources.graph.cycles`,
:mod:`~graphbench.data.sources.graph.graphtheoryprop`)."""
