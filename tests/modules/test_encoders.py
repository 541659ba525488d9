"""Input encoders: one embedding table per categorical column summed, one learned vector for constant features, and
the encoder chosen by a dataset's feature kind."""

from __future__ import annotations

import pytest
import torch
from ogb.graphproppred.mol_encoder import AtomEncoder, BondEncoder
from torch import nn

from graphbench.data.info import FeatureSpec
from graphbench.modules.encoders import CategoricalEncoder, ConstantEncoder, make_feature_encoder


def test_categorical_encoder_sums_one_row_of_each_table() -> None:
    encoder = CategoricalEncoder(cardinalities=(2, 3), out_dim=2)
    with torch.no_grad():
        encoder.tables[0].weight.copy_(torch.tensor([[1.0, 0.0], [2.0, 0.0]]))
        encoder.tables[1].weight.copy_(torch.tensor([[0.0, 10.0], [0.0, 20.0], [0.0, 30.0]]))
    x = torch.tensor([[0, 2], [1, 0], [1, 1]])
    assert torch.equal(encoder(x), torch.tensor([[1.0, 30.0], [2.0, 10.0], [2.0, 20.0]]))


def test_constant_encoder_gives_every_row_the_same_learned_vector() -> None:
    encoder = ConstantEncoder(out_dim=3)
    out = encoder(torch.zeros(4, 7))
    assert out.shape == (4, 3) and torch.equal(out, encoder.weight.expand(4, 3))
    out.sum().backward()
    assert torch.equal(encoder.weight.grad, torch.full((1, 3), 4.0))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        (FeatureSpec("atom"), AtomEncoder),
        (FeatureSpec("bond"), BondEncoder),
        (FeatureSpec("dense", dim=5), nn.Linear),
        (FeatureSpec("categorical", cardinalities=(4, 2)), CategoricalEncoder),
        (FeatureSpec("constant"), ConstantEncoder),
    ],
)
def test_the_feature_kind_chooses_the_encoder(spec: FeatureSpec, kind: type[nn.Module]) -> None:
    assert type(make_feature_encoder(spec, out_dim=8)) is kind


def test_dense_and_categorical_encoders_take_their_sizes_from_the_spec() -> None:
    linear = make_feature_encoder(FeatureSpec("dense", dim=5), out_dim=8)
    assert isinstance(linear, nn.Linear) and linear.weight.shape == (8, 5)
    categorical = make_feature_encoder(FeatureSpec("categorical", cardinalities=(4, 2)), out_dim=8)
    assert isinstance(categorical, CategoricalEncoder)
    assert [t.weight.shape for t in categorical.tables] == [(4, 8), (2, 8)]


def test_unknown_kind_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"^unknown feature kind 'image'; valid: atom, bond, dense, categorical, constant$"):
        make_feature_encoder(FeatureSpec("image"), out_dim=8)  # type: ignore[arg-type]
