"""graphbench.speedups.dropout: the compiled-mask dropout equals ``F.dropout`` bit for bit (outputs,
gradients, later random draws), also inside a network trained on real batches; every input it does not
take goes to ``F.dropout``."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from graphbench import speedups
from graphbench.modules.layers import GCNLayer, GINELayer
from graphbench.speedups import cpu_bernoulli
from graphbench.speedups import dropout as dropout_module
from graphbench.speedups.dropout import Dropout, dropout

needs_equal_kernel = pytest.mark.skipif(not cpu_bernoulli.available(), reason="this torch build draws masks differently")


@pytest.fixture(autouse=True)
def every_size_takes_the_compiled_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    """The small inputs below take the compiled mask as large ones do."""
    monkeypatch.setattr(dropout_module, "MIN_ELEMENTS", 0)


@pytest.fixture
def compiled_draws(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Numbers of elements drawn by the compiled kernel, one entry per call."""
    calls: list[int] = []
    draw = cpu_bernoulli.draw

    def counting(n: int, p: float) -> Tensor:
        calls.append(n)
        return draw(n, p)

    monkeypatch.setattr(cpu_bernoulli, "draw", counting)
    return calls


def _run(function, x0: Tensor, p: float, upstream: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    x = x0.clone().requires_grad_()
    torch.manual_seed(11)
    y = function(x, p, True)
    y.backward(upstream)
    return y.detach(), x.grad, torch.rand(4)


@needs_equal_kernel
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_equals_f_dropout_bit_for_bit(p: float, compiled_draws: list[int]) -> None:
    generator = torch.Generator().manual_seed(0)
    x0, upstream = torch.randn(700, 13, generator=generator), torch.randn(700, 13, generator=generator)
    ours = _run(dropout, x0, p, upstream)
    assert compiled_draws == [700 * 13]
    plain = _run(F.dropout, x0, p, upstream)
    for a, b in zip(ours, plain):
        assert torch.equal(a, b)
    kept = ours[0] != 0
    assert 0 < kept.sum() < x0.numel()
    assert torch.equal(ours[0][kept], x0[kept] * torch.tensor(1.0 / (1.0 - p)))
    assert torch.equal(ours[1] != 0, kept)  # the gradient passes where the mask kept


@needs_equal_kernel
def test_special_values_are_multiplied_as_torch_multiplies(compiled_draws: list[int]) -> None:
    # dropped entries are x * 0: -0 for negatives, NaN for NaN and inf; kept ones x * 1/(1-p)
    x = torch.tensor([-1.0, float("nan"), float("inf"), -float("inf"), 3e38, -0.0] * 50)
    torch.manual_seed(4)
    ours = dropout(x, 0.5, True)
    torch.manual_seed(4)
    plain = F.dropout(x, 0.5, True)
    assert compiled_draws == [x.numel()]
    assert torch.equal(ours.view(torch.int32), plain.view(torch.int32))  # bit patterns, NaN and signs included


@needs_equal_kernel
def test_second_derivatives_equal_torchs(compiled_draws: list[int]) -> None:
    # a gradient penalty differentiates the backward itself (create_graph)
    w0 = torch.randn(40, 8, generator=torch.Generator().manual_seed(1))
    penalties = []
    for function in (dropout, F.dropout):
        w = w0.clone().requires_grad_()
        torch.manual_seed(9)
        y = function(w.tanh(), 0.3, True)
        (grad,) = torch.autograd.grad(y.pow(2).sum(), w, create_graph=True)
        grad.pow(2).sum().backward()
        penalties.append((grad.detach(), w.grad))
    assert compiled_draws == [40 * 8]
    assert torch.equal(penalties[0][0], penalties[1][0])
    assert torch.equal(penalties[0][1], penalties[1][1])


@pytest.mark.parametrize(
    ("x", "p", "training"),
    [
        (torch.randn(30, 4), 0.1, False),  # evaluation
        (torch.randn(30, 4), 0.0, True),
        (torch.randn(30, 4), 1.0, True),
        (torch.randn(30, 4, dtype=torch.float64), 0.3, True),
        (torch.randn(4, 30).t(), 0.3, True),  # not contiguous
        (torch.randn(0, 4), 0.3, True),
    ],
)
def test_other_inputs_go_to_f_dropout(x: Tensor, p: float, training: bool, compiled_draws: list[int]) -> None:
    torch.manual_seed(5)
    ours = dropout(x, p, training)
    torch.manual_seed(5)
    assert torch.equal(ours, F.dropout(x, p, training))
    assert compiled_draws == []


@needs_equal_kernel
def test_inputs_below_the_size_threshold_go_to_f_dropout(compiled_draws: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    x0 = torch.randn(30, 4)
    monkeypatch.setattr(dropout_module, "MIN_ELEMENTS", x0.numel() + 1)
    ours, plain = _run(dropout, x0, 0.3, torch.ones(30, 4)), _run(F.dropout, x0, 0.3, torch.ones(30, 4))
    assert compiled_draws == []
    assert all(torch.equal(a, b) for a, b in zip(ours, plain))
    monkeypatch.setattr(dropout_module, "MIN_ELEMENTS", x0.numel())
    _run(dropout, x0, 0.3, torch.ones(30, 4))
    assert compiled_draws == [x0.numel()]


def test_functorch_transforms_go_to_f_dropout(compiled_draws: list[int]) -> None:
    x = torch.randn(3, 5)
    torch.manual_seed(2)
    ours = torch.func.vmap(lambda row: dropout(row, 0.5, True), randomness="same")(x)
    torch.manual_seed(2)
    plain = torch.func.vmap(lambda row: F.dropout(row, 0.5, True), randomness="same")(x)
    assert torch.equal(ours, plain)
    assert compiled_draws == []


def test_module_is_torch_dropouts_twin() -> None:
    ours, plain = Dropout(0.25), nn.Dropout(0.25)
    assert isinstance(ours, nn.Dropout)
    assert repr(ours) == repr(plain)
    ours.eval()
    x = torch.randn(6, 2)
    assert torch.equal(ours(x), x)


@needs_equal_kernel
@pytest.mark.parametrize("layer", [GCNLayer, GINELayer])
def test_a_network_trains_on_real_batches_exactly_as_with_torchs_masks(
    layer: type[nn.Module], compiled_draws: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.modules.test_propagation import _network, _peptide_batch

    batch = _peptide_batch(8)
    results = []
    for compiled in (True, False):
        if not compiled:
            monkeypatch.setattr(dropout_module, "_takes_compiled_mask", lambda x: False)
        torch.manual_seed(0)
        net = speedups.apply(_network(layer, sparse=True, layers=3, width=16))
        optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3)
        losses = []
        for step in range(3):
            torch.manual_seed(step)
            optimizer.zero_grad()
            loss = F.binary_cross_entropy_with_logits(net(batch), batch.y)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        results.append((losses, [p.grad for p in net.parameters()]))
        if compiled:
            assert len(compiled_draws) == 3 * 3  # a mask after every layer, every step
    (ours, our_grads), (plain, plain_grads) = results
    assert all(torch.equal(a, b) for a, b in zip(ours, plain))
    assert all(torch.equal(a, b) for a, b in zip(our_grads, plain_grads) if a is not None)
