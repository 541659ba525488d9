"""graphbench.speedups.linear: oneDNN's product equals ``F.linear`` in values and in first and second
derivatives, and every input it does not take goes to ``F.linear`` unchanged."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from graphbench.speedups.linear import _ONEDNN, Linear, linear

needs_onednn = pytest.mark.skipif(not _ONEDNN, reason="this torch build has no oneDNN linear")

X = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
W = torch.tensor([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
B = torch.tensor([0.5, -1.0, 0.0])
#: the upstream gradient dL/dy
G = torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0]])


def _took_onednn(y: Tensor) -> bool:
    return y.grad_fn is not None and "OneDnnLinear" in y.grad_fn.name()


def _leaves(*tensors: Tensor) -> list[Tensor]:
    return [t.clone().requires_grad_() for t in tensors]


@needs_onednn
def test_values_and_gradients_by_hand() -> None:
    x, w, b = _leaves(X, W, B)
    y = linear(x, w, b)
    assert _took_onednn(y)
    # y = x W^T + b
    assert torch.equal(y, torch.tensor([[1.5, 3.0, 3.0], [3.5, 7.0, 7.0]]))
    y.backward(G)
    # dL/dx = G W, dL/dW = G^T x, dL/db = column sums of G
    assert torch.equal(x.grad, torch.tensor([[3.0, 2.0], [-1.0, 1.0]]))
    assert torch.equal(w.grad, torch.tensor([[1.0, 2.0], [3.0, 4.0], [-1.0, 0.0]]))
    assert torch.equal(b.grad, torch.tensor([1.0, 1.0, 1.0]))


@needs_onednn
@pytest.mark.parametrize("bias", [True, False])
def test_equals_f_linear_on_a_layer_sized_product(bias: bool) -> None:
    generator = torch.Generator().manual_seed(0)
    x0, w0 = torch.randn(1000, 95, generator=generator), torch.randn(64, 95, generator=generator)
    b0 = torch.randn(64, generator=generator) if bias else None
    upstream = torch.randn(1000, 64, generator=generator)
    results = []
    for function in (linear, F.linear):
        x, w = _leaves(x0, w0)
        b = _leaves(b0)[0] if b0 is not None else None
        y = function(x, w, b)
        assert _took_onednn(y) == (function is linear)
        y.backward(upstream)
        results.append((y, x.grad, w.grad, None if b is None else b.grad))
    for fast, plain in zip(*results):
        if plain is None:
            assert fast is None
        else:
            torch.testing.assert_close(fast, plain, rtol=1e-5, atol=1e-4)


@needs_onednn
def test_second_derivatives_equal_f_linears() -> None:
    """A gradient penalty, ||dL/dx||^2, differentiated again with respect to the weight."""
    grads = []
    for function in (linear, F.linear):
        x, w, b = _leaves(X, W, B)
        y = function(x, w, b)
        (grad_x,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
        (grad_w,) = torch.autograd.grad(grad_x.pow(2).sum(), w)
        grads.append(grad_w)
    torch.testing.assert_close(grads[0], grads[1], rtol=0, atol=0)


@needs_onednn
def test_empty_batch() -> None:
    x, w, b = _leaves(torch.zeros(0, 2), W, B)
    y = linear(x, w, b)
    assert y.shape == (0, 3)
    y.sum().backward()
    assert torch.equal(w.grad, torch.zeros(3, 2)) and torch.equal(b.grad, torch.zeros(3))


@pytest.mark.parametrize(
    "case",
    ["float64", "3-d input", "bfloat16 autocast"],
)
def test_inputs_it_does_not_take_go_to_f_linear(case: str) -> None:
    x, w, b = X, W, B
    if case == "float64":
        x, w, b = X.double(), W.double(), B.double()
    if case == "3-d input":
        x = torch.stack([X, 2 * X])
    x, w, b = _leaves(x, w, b)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=case == "bfloat16 autocast"):
        y, expected = linear(x, w, b), F.linear(x, w, b)
    assert not _took_onednn(y)
    assert y.dtype == expected.dtype and torch.equal(y, expected)


def test_torch_func_transforms_use_f_linear() -> None:
    """Per-example Jacobians (the NTK callback's ``vmap`` over ``vjp``) go through ``F.linear``."""

    def per_example(weight: Tensor, x: Tensor, function) -> Tensor:
        return torch.func.jacrev(lambda w: function(x.unsqueeze(0), w, B).squeeze(0))(weight)

    jacobians = torch.func.vmap(per_example, in_dims=(None, 0, None))(W, X, linear)
    expected = torch.func.vmap(per_example, in_dims=(None, 0, None))(W, X, F.linear)
    assert torch.equal(jacobians, expected)
    # d y_k / d W_kj = x_j, zero for other rows
    assert torch.equal(jacobians[1, 2], torch.tensor([[0.0, 0.0], [0.0, 0.0], [3.0, 4.0]]))


def test_linear_module_is_torchs_linear() -> None:
    torch.manual_seed(3)
    ours = Linear(4, 2)
    torch.manual_seed(3)
    theirs = nn.Linear(4, 2)
    assert isinstance(ours, nn.Linear)
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    for key, value in ours.state_dict().items():
        assert torch.equal(value, theirs.state_dict()[key])  # same initialization
    x = torch.randn(5, 4)
    torch.testing.assert_close(ours(x), theirs(x), rtol=1e-6, atol=1e-6)


def _sparse_rows() -> tuple[Tensor, Tensor]:
    """A 4 x 3 bag-of-words matrix, dense and CSR (row 2 empty, as a node without words)."""
    dense = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    return dense, dense.to_sparse_csr()


def test_sparse_csr_input_values_and_weight_gradient_by_hand() -> None:
    dense, rows = _sparse_rows()
    weight = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]], requires_grad=True)
    bias = torch.tensor([0.5, -0.5], requires_grad=True)
    out = linear(rows, weight, bias)
    # row 0 = words 0 and 2: [1 + 3, -1 + 1] + b; row 2 has no words: b alone
    assert torch.equal(out.detach(), torch.tensor([[4.5, -0.5], [2.5, -0.5], [0.5, -0.5], [3.5, -1.5]]))
    out.sum().backward()
    # dL/dW[o, d] = sum_n x[n, d]: each column's word count, for both outputs
    assert torch.equal(weight.grad, torch.tensor([[2.0, 2.0, 1.0], [2.0, 2.0, 1.0]]))
    assert torch.equal(bias.grad, torch.tensor([4.0, 4.0]))
    assert torch.equal(out.detach(), F.linear(dense, weight, bias).detach())


def test_sparse_csr_input_under_vmap_is_one_product_of_the_weights_side_by_side() -> None:
    # IGB's batched fits: K weights, one feature matrix; values and gradients are each copy's own
    dense, rows = _sparse_rows()
    generator = torch.Generator().manual_seed(0)
    weights = torch.randn(5, 2, 3, generator=generator, requires_grad=True)
    bias = torch.randn(5, 2, generator=generator, requires_grad=True)
    cotangent = torch.randn(5, 4, 2, generator=generator)
    batched = torch.func.vmap(lambda w, b: linear(rows, w, b))(weights, bias)
    grads = torch.autograd.grad((batched * cotangent).sum(), (weights, bias))
    for k in range(5):
        w, b = weights[k].detach().requires_grad_(), bias[k].detach().requires_grad_()
        own = F.linear(dense, w, b)
        torch.testing.assert_close(batched[k], own, rtol=0, atol=1e-6)
        own_grads = torch.autograd.grad((own * cotangent[k]).sum(), (w, b))
        torch.testing.assert_close(grads[0][k], own_grads[0], rtol=0, atol=1e-5)
        torch.testing.assert_close(grads[1][k], own_grads[1], rtol=0, atol=1e-5)


def test_sparse_csr_input_under_vmap_multiplies_the_features_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphbench.speedups import linear as module

    products: list[tuple[int, ...]] = []
    real_mm = torch.sparse.mm

    def counted(matrix: Tensor, dense: Tensor) -> Tensor:
        products.append(tuple(dense.shape))
        return real_mm(matrix, dense)

    monkeypatch.setattr(module.torch.sparse, "mm", counted)
    _, rows = _sparse_rows()
    weights = torch.randn(7, 2, 3, requires_grad=True)
    torch.func.vmap(lambda w: linear(rows, w))(weights).sum().backward()
    assert products == [(3, 14), (4, 14)]  # forward: [in, K * out]; backward: x^T times [N, K * out]


@needs_onednn
@pytest.mark.parametrize("rows", [19, 1000])
def test_the_input_gradient_equals_onednns_product_with_the_transposed_copy(rows: int) -> None:
    """The backward hands oneDNN the transposed view of the weight: the same values as its contiguous copy."""
    generator = torch.Generator().manual_seed(1)
    x, w = _leaves(torch.randn(rows, 95, generator=generator), torch.randn(64, 95, generator=generator))
    upstream = torch.randn(rows, 64, generator=generator)
    linear(x, w, None).backward(upstream)
    copied = torch.ops.mkldnn._linear_pointwise(upstream, w.detach().t().contiguous(), None, "none", [], "")
    assert torch.equal(x.grad, copied)
