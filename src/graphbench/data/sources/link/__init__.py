"""Sources of link-level datasets: node pairs in one graph (:mod:`~graphbench.data.sources.link.ogbl`)
or in many graphs (:mod:`~graphbench.data.sources.link.pcqm_contact`, :mod:`~graphbench.data.sources.link.tsp`)."""
