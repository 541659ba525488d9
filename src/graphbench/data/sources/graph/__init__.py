"""Sources of graph-level datasets: molecules, TU, superpixel images, generated graphs."""
