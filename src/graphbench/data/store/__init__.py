"""The collated in-memory store of a dataset, its collation and bulk batching, the processed-data cache."""
