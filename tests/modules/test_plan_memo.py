"""PlanMemo hands the last batch's EdgePlan out again only for the same, unmodified edge tensors in
the same autograd mode; a network that reuses its full-batch plan trains bitwise like one that
rebuilds it every step."""

from __future__ import annotations

import copy
import pickle

import torch

from graphbench.modules.layers import GCNLayer
from graphbench.modules.propagation import EdgePlan, PlanMemo
from tests.modules.test_network import network, tiny_batch

EDGES = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])


def test_the_same_unchanged_edges_get_the_same_plan() -> None:
    memo = PlanMemo()
    weight = torch.ones(4)
    assert memo.plan(EDGES, 3) is memo.plan(EDGES, 3)
    assert memo.plan(EDGES, 3, weight) is memo.plan(EDGES, 3, weight)


def test_other_tensors_edits_and_node_counts_get_a_new_plan() -> None:
    memo = PlanMemo()
    edges = EDGES.clone()
    first = memo.plan(edges, 3)
    assert memo.plan(edges.clone(), 3) is not first  # equal values, another tensor
    assert memo.plan(edges, 4) is not memo.plan(edges, 3)
    before = memo.plan(edges, 3)
    edges[1, 3] = 0  # in place: the edge 2 -> 1 becomes 2 -> 0
    after = memo.plan(edges, 3)
    assert after is not before
    matrix = after.gcn_adjacency[0].to_dense()
    assert matrix[0, 2] > 0 and matrix[1, 2] == 0
    weight = torch.ones(4)
    weighted = memo.plan(edges, 3, weight)
    assert memo.plan(edges, 3, torch.ones(4)) is not weighted
    weight[0] = 2.0
    assert memo.plan(edges, 3, weight) is not weighted


def test_weights_that_require_gradients_are_never_memoized() -> None:
    memo = PlanMemo()
    weight = torch.ones(4, requires_grad=True)
    assert memo.plan(EDGES, 3, weight) is not memo.plan(EDGES, 3, weight)


def test_inference_mode_keeps_a_plan_of_its_own() -> None:
    memo = PlanMemo()
    with torch.inference_mode():
        evaluation = memo.plan(EDGES, 3)
        evaluation.gcn_adjacency  # noqa: B018 - built here, as inference tensors
    training = memo.plan(EDGES, 3)
    assert training is not evaluation
    assert not training.gcn_adjacency[0].is_inference()
    with torch.inference_mode():
        assert memo.plan(EDGES, 3) is evaluation
    assert memo.plan(EDGES, 3) is training


def test_copies_and_pickles_of_a_used_network_start_with_an_empty_memo() -> None:
    net = network(GCNLayer)
    batch = tiny_batch()
    net(batch)
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert isinstance(clone.plans, PlanMemo) and clone.plans._built == {}
        torch.testing.assert_close(clone.eval()(batch), net.eval()(batch))
        net.train()


def test_reusing_the_plan_trains_bitwise_like_rebuilding_it_with_evaluation_in_between() -> None:
    batch = tiny_batch()
    torch.manual_seed(0)
    reused = network(GCNLayer, dropout=0.2)
    rebuilt = copy.deepcopy(reused)
    rebuilt.plans = _NoMemo()
    results = []
    for net in (reused, rebuilt):
        optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
        trace = []
        for step in range(4):
            torch.manual_seed(step)
            net.train()
            optimizer.zero_grad()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(net(batch), torch.ones(2, 3))
            loss.backward()
            trace += [loss.detach(), *(p.grad.clone() for p in net.parameters() if p.grad is not None)]
            optimizer.step()
            net.eval()
            with torch.inference_mode():  # as Lightning evaluates between epochs
                trace.append(net(batch))
        results.append(trace)
    assert reused.plans._built  # the memo was used
    for ours, theirs in zip(*results, strict=True):
        assert torch.equal(ours, theirs)


class _NoMemo(PlanMemo):
    """A fresh plan at every call: what the network did before plans were memoized."""

    def plan(self, edge_index: torch.Tensor, num_nodes: int, edge_weight: torch.Tensor | None = None) -> EdgePlan:
        return EdgePlan(edge_index, num_nodes, edge_weight)


def test_inference_tensors_are_never_memoized() -> None:
    # an evaluation batch collated under inference mode has no version counter to check edits by
    memo = PlanMemo()
    with torch.inference_mode():
        edges = EDGES.clone()
        assert memo.plan(edges, 3) is not memo.plan(edges, 3)
        weight = torch.ones(4)
    assert weight.is_inference() and not EDGES.is_inference()
    assert memo.plan(EDGES, 3, weight) is not memo.plan(EDGES, 3, weight)
