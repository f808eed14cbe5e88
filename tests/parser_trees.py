"""Hypothesis strategies for dependency trees over nodes 0..n (heads[0] == -1)."""

from hypothesis import strategies as st


@st.composite
def trees(draw, max_words=12):
    """Any tree: each word in a random order takes a head among the nodes already attached."""
    n = draw(st.integers(0, max_words))
    order = draw(st.permutations(range(1, n + 1)))
    heads, attached = [-1] * (n + 1), [0]
    for node in order:
        heads[node] = draw(st.sampled_from(attached))
        attached.append(node)
    return heads


@st.composite
def projective_trees(draw, max_words=12):
    """Projective trees: each subtree covers a contiguous span, cut into contiguous child spans."""
    n = draw(st.integers(0, max_words))
    heads = [-1] * (n + 1)

    def build(low, high, parent):  # the words low..high-1 form subtrees of parent
        while low < high:
            end = draw(st.integers(low + 1, high))
            root = draw(st.integers(low, end - 1))
            heads[root] = parent
            build(low, root, root)
            build(root + 1, end, root)
            low = end

    build(1, n + 1, 0)
    return heads


def labels_for(heads):
    """Labels that tell the arcs apart: the dependent's own index."""
    return [-1] + list(range(1, len(heads)))


def is_tree(heads):
    """Every node 1..n reaches the root 0 through its heads."""
    for node in range(1, len(heads)):
        seen = set()
        while node != 0:
            if node in seen or not 0 <= heads[node] < len(heads):
                return False
            seen.add(node)
            node = heads[node]
    return True
