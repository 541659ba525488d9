"""The splits of every dataset."""

#: the splits of every dataset, in the order they are built, logged and reported (metric keys ``<split>/<name>``)
SPLITS: tuple[str, ...] = ("train", "val", "test")
