"""The package's layering as a contract a tool holds: no import cycle anywhere, engine and state
below the strategies, experiments and figures (import-linter checks the layers in CI too:
``lint-imports``, contracts in pyproject.toml)."""

from __future__ import annotations

import grimp
import pytest


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("skewlab")  # every import, function-level and TYPE_CHECKING too


def strongly_connected(graph) -> list[set[str]]:
    """Tarjan's strongly connected components of the module graph (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[set[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            module, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[module] = min(low[module], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == module:
                        break
                components.append(component)
    return components


def test_no_import_cycle_anywhere_in_the_package(graph):
    cycles = [sorted(c) for c in strongly_connected(graph) if len(c) > 1]
    assert cycles == []


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("skewlab.engine", "skewlab.strategies"),
        ("skewlab.engine", "skewlab.experiments"),
        ("skewlab.engine", "skewlab.viz"),
        ("skewlab.engine", "skewlab.operators"),
        ("skewlab.state", "skewlab.engine"),
        ("skewlab.state", "skewlab.aggregates"),
        ("skewlab.operators", "skewlab.strategies"),
        ("skewlab.strategies", "skewlab.experiments"),
        ("skewlab.experiments", "skewlab.viz"),
    ],
)
def test_a_lower_layer_never_reaches_a_higher_one(graph, lower, higher):
    chains = graph.find_shortest_chains(importer=lower, imported=higher, as_packages=True)
    assert not chains, f"{lower} reaches {higher}: {sorted(chains)[:3]}"


def test_the_cycle_finder_finds_a_cycle():
    # the check above could never fail if the component search missed cycles
    graph = grimp.ImportGraph()
    for module in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(module)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.z")
    graph.add_import(importer="a.z", imported="a.x")
    assert sorted(map(sorted, strongly_connected(graph))) == [["a"], ["a.x", "a.y", "a.z"]]


def test_a_python_worker_imports_no_datasketch_or_scipy():
    """What a Spark Python worker imports to run skewlab's operators stays light: datasketch's
    package import pulls in scipy (about 0.4 s), which every fresh worker would pay -- each
    ``transformWithStateInPandas`` query starts one at planning time -- though no operator
    makes a sketch (the oracle and the tests do)."""
    import subprocess
    import sys

    check = (
        "import sys, skewlab.operators, skewlab.operators.streaming_stats, skewlab.strategies;"
        "print(sorted(m for m in ('datasketch', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_sketch_is_still_datasketch():
    from skewlab.aggregates.hll import new_sketch

    assert type(new_sketch()).__module__.startswith("datasketch.")
