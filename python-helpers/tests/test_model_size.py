"""model_bytes: the bytes of the tensors a model computes with (the size reports of qat/convert, export and builds)."""

import torch

from qat_kernel.analysis.model_size import model_bytes


class _WithGraph(torch.nn.Module):
    """A user model that keeps its own `graph` (a graph network's edges): not an FX graph."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 2)
        self.graph = {"edges": [(0, 1), (1, 2)]}

    def forward(self, x):
        return self.fc(x)


class _Matmul(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4, 3))
        self.unused = torch.nn.Parameter(torch.ones(100))

    def forward(self, x):
        return x @ self.w


def test_a_module_with_its_own_graph_attribute_counts_its_state_dict():
    # Was: its `graph` taken for an FX graph, AttributeError ('dict' object has no attribute 'nodes').
    assert model_bytes(_WithGraph()) == (4 * 2 + 2) * 4


def test_an_fx_graph_counts_the_attributes_its_nodes_read():
    gm = torch.fx.symbolic_trace(_Matmul())
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == ["w"]
    assert model_bytes(gm) == 4 * 3 * 4  # `unused` is an attribute no node reads
