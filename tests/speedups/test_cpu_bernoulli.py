"""graphbench.speedups.cpu_bernoulli: the compiled draws equal ``Tensor.bernoulli_`` on the default CPU
generator element for element, and leave the generator where ``bernoulli_`` leaves it."""

from __future__ import annotations

import math

import pytest
import torch

from graphbench.speedups import cpu_bernoulli
from graphbench.speedups.cpu_bernoulli import available, draw

needs_equal_kernel = pytest.mark.skipif(not available(), reason="this torch build draws Bernoulli masks differently")


def test_first_draw_by_hand_from_the_mt19937_reference_outputs() -> None:
    # seeded with 5489, MT19937's first two outputs are 3499211612 and 581869302 (Matsumoto & Nishimura's
    # reference implementation, also std::mt19937's default seed); element 0 takes 53 bits of them
    u = ((3499211612 % 2**21) * 2**32 + 581869302) / 2**53
    assert u == pytest.approx(0.5541210820565243, abs=0.0)
    for p, expected in ((u, 0.0), (math.nextafter(u, 1.0), 1.0)):  # the draw is u < p
        torch.manual_seed(5489)
        assert draw(1, p).item() == expected


@needs_equal_kernel
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("n", [1, 311, 312, 313, 2047, 2048, 2049, 10007])
def test_equals_bernoulli_and_leaves_the_generator_where_it_would(n: int, p: float) -> None:
    # 312 elements use one twist's 624 words; 2048 elements fill one 4096-word chunk
    torch.manual_seed(n)
    torch.rand(5)  # start mid-block
    expected = torch.empty(n).bernoulli_(p)
    expected_next = torch.rand(3)
    torch.manual_seed(n)
    torch.rand(5)
    got = draw(n, p)
    assert got.dtype == torch.uint8
    assert torch.equal(got.float(), expected)
    assert torch.equal(torch.rand(3), expected_next)


@needs_equal_kernel
def test_a_stream_of_draws_of_mixed_sizes_matches_torch() -> None:
    sizes = (3, 700, 5, 1300, 1)
    torch.manual_seed(7)
    expected = [torch.empty(n).bernoulli_(0.5) for n in sizes] + [torch.randn(4)]
    torch.manual_seed(7)
    got = [draw(n, 0.5).float() for n in sizes] + [torch.randn(4)]
    assert all(torch.equal(a, b) for a, b in zip(got, expected))


def test_the_self_check_restores_the_callers_generator() -> None:
    torch.manual_seed(3)
    before = torch.get_rng_state()
    assert cpu_bernoulli.available.__wrapped__() == available()
    assert torch.equal(torch.get_rng_state(), before)


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_bad_p_is_refused_with_one_line(p: float) -> None:
    with pytest.raises(ValueError, match=rf"p must lie in \[0, 1\], got {p}"):
        draw(4, p)
