"""Sources of link-level datasets: node pairs in one graph or in many graphs."""
