"""``dataset_transform``: the graph transform, then the PE transform, composed; ``None`` when neither is set."""

from __future__ import annotations

from omegaconf import OmegaConf
from torch_geometric.transforms import AddSelfLoops, Compose, ToUndirected

from graphbench.transforms.dataset_transform import dataset_transform

GRAPH = {"_target_": "torch_geometric.transforms.ToUndirected", "name": "undirected"}
PE = {"_target_": "torch_geometric.transforms.AddSelfLoops", "name": "loops"}


def test_neither_transform_gives_none() -> None:
    assert dataset_transform(OmegaConf.create({"pe": {"name": "none"}})) is None
    assert dataset_transform(OmegaConf.create({"transform": None, "pe": {"transform": None}})) is None


def test_one_transform_is_returned_alone_without_its_metadata_keys() -> None:
    assert isinstance(dataset_transform(OmegaConf.create({"transform": GRAPH, "pe": {}})), ToUndirected)
    assert isinstance(dataset_transform(OmegaConf.create({"pe": {"transform": PE}})), AddSelfLoops)


def test_the_graph_transform_comes_before_the_pe_transform() -> None:
    composed = dataset_transform(OmegaConf.create({"transform": GRAPH, "pe": {"transform": PE}}))
    assert isinstance(composed, Compose)
    assert [type(t) for t in composed.transforms] == [ToUndirected, AddSelfLoops]
