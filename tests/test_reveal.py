"""reveal_order: the summation trees of our own orders and instructions (a self-test of the
emulator), of plain loops, of NumPy and JAX, and its refusals."""

import math
import re

import jax.numpy as jnp
import matplotlib.figure
import numpy as np
import pytest

import ascjax
from ascjax import precision, viz


def test_small_trees_by_hand():
    def sequential(x):
        acc = x[:, 0].copy()
        for i in range(1, x.shape[1]):
            acc = acc + x[:, i]
        return acc

    assert precision.reveal_order(sequential, 4) == (((0, 1), 2), 3)
    assert precision.reveal_order(lambda x: precision.sum(x, order="adjacent_tree"), 4) == \
        ((0, 1), (2, 3))
    assert precision.reveal_order(sequential, 1) == 0
    assert precision.reveal_order(sequential, 2) == (0, 1)


@pytest.mark.parametrize("order", [o for o in precision.ORDERS if o != "kahan"])
@pytest.mark.parametrize("n", [7, 200])
def test_recovers_every_emulated_order(order, n):
    got = precision.reveal_order(lambda x: precision.sum(x, order=order), n)
    assert got == precision.order_tree(order, n)


def test_recovers_half_orders_with_half_probes():
    for order in ("sequential", "numpy_pairwise", "repeat_sequential", "repeat_vector_merge"):
        got = precision.reveal_order(lambda x, o=order: precision.sum(x, order=o), 300,
                                     dtype="half")
        assert got == precision.order_tree(order, 300, "half")


def test_recovers_the_instructions_trees():
    full = ascjax.create_mask("PAT_ALL", "float")

    def datablock(x):  # the 8 floats of DataBlock 0
        reg = np.zeros((x.shape[0], 64), np.float32)
        reg[:, :8] = x
        return np.asarray(ascjax.reduce_sum_datablock(reg, full))[:, 0]

    assert precision.reveal_order(datablock, 8) == (((0, 1), (2, 3)), ((4, 5), (6, 7)))

    def whole(x):
        return np.asarray(ascjax.whole_reduce_sum(np.zeros((x.shape[0], 1), np.float32), x,
                                                  64, 1, 1, 1, 8))[:, 0]

    assert precision.reveal_order(whole, 64) == precision.order_tree("adjacent_tree", 64)

    def block(x):  # BlockReduceSum, block 0 of a half register: 16 elements
        src = np.zeros((x.shape[0], 128), np.float16)
        src[:, :16] = x
        return np.asarray(ascjax.block_reduce_sum(np.zeros((x.shape[0], 8), np.float16), src,
                                                  1, 128, 1, 1, 8))[:, 0]

    assert precision.reveal_order(block, 16, dtype="half") == \
        precision.order_tree("adjacent_tree", 16)

    # 200 floats are 800 bytes: the 950's first-n form merges the repeats (method 3, A17).
    for product, n, order in (("950", 200, "repeat_vector_merge"), ("950", 300, "repeat_tree"),
                              ("A2", 200, "repeat_sequential"),
                              ("inference AI Core", 200, "repeat_tree")):
        def reduce(x, product=product, n=n):
            dst = np.zeros((x.shape[0], 1), np.float32)
            dst, _ = ascjax.reduce_sum(dst, x, None, n, config=ascjax.Config(product=product))
            return np.asarray(dst)[:, 0]

        assert precision.reveal_order(reduce, n) == precision.order_tree(order, n), product


def test_reveals_numpy_sum():
    assert precision.reveal_order(lambda x: np.sum(x, axis=-1), 300) == \
        precision.order_tree("numpy_pairwise", 300)
    assert precision.reveal_order(lambda x: np.sum(x, axis=-1), 40, dtype="half") == \
        precision.order_tree("numpy_pairwise", 40)
    # NumPy has no pairwise loop for ml_dtypes' bfloat16: it sums left to right.
    assert precision.reveal_order(lambda x: np.sum(x, axis=-1), 6, dtype="bfloat16") == \
        precision.order_tree("sequential", 6)


def test_reveals_jax_numpy_sum():
    tree = precision.reveal_order(lambda x: jnp.sum(jnp.asarray(x), axis=-1), 100)
    assert sorted(_leaves(tree)) == list(range(100))
    # Replaying the revealed tree reproduces jnp.sum's bits on random data.
    # (same shape as the probes: XLA may choose its reduction order by shape)
    x = np.random.default_rng(0).standard_normal((99, 100)).astype(np.float32)
    np.testing.assert_array_equal(_replay(x, tree), np.asarray(jnp.sum(x, axis=-1)))


def _leaves(tree):
    return [tree] if isinstance(tree, int) else [leaf for t in tree for leaf in _leaves(t)]


def _replay(x, tree):
    if isinstance(tree, int):
        return x[:, tree]
    out = _replay(x, tree[0])
    for child in tree[1:]:
        out = (out + _replay(x, child)).astype(np.float32)
    return out


def test_multi_operand_adds_give_wider_nodes():
    def add3(x):
        """A 3-input adder as matrix units build them: align the operands to the largest one's
        exponent, dropping bits below its 24-bit window, add exactly, round once."""
        top = np.floor(np.log2(np.max(np.abs(x), axis=-1, keepdims=True)))
        quantum = np.exp2(top - 23)
        aligned = np.trunc(x / quantum) * quantum
        return np.array([math.fsum(r) for r in aligned], np.float32)

    def fused3(x):
        x = x.astype(np.float64)
        return add3(x[:, :3]) + add3(x[:, 3:])

    assert precision.reveal_order(fused3, 6) == ((0, 1, 2), (3, 4, 5))


def test_refuses_what_is_not_a_tree():
    with pytest.raises(ValueError, match="reveal_order"):
        precision.reveal_order(lambda x: np.sum(x.astype(np.float64), axis=-1) * 0.5, 5)
    with pytest.raises(ValueError, match=re.escape(
            "reveal_order: n=0 is outside the valid range [1, 9007199254740992]")):
        precision.reveal_order(np.sum, 0)


def test_n_must_be_an_int_not_a_bool():
    """n=True (bool is an int subclass) was taken as n=1 and returned the tree 0."""
    for bad in (True, np.bool_(True), 4.0):
        with pytest.raises(TypeError, match=re.escape(
                f"reveal_order: n must be a Python int (a static value), got {bad!r}")):
            precision.reveal_order(np.sum, bad)
    # NumPy integers are ints, as everywhere else in the package
    assert precision.reveal_order(lambda x: np.sum(x, axis=-1), np.int64(4)) == \
        (((0, 1), 2), 3)


def test_summation_tree_of_an_order_returns_a_figure(tmp_path):
    fig = viz.summation_tree(precision.order_tree("numpy_pairwise", 20), title="np.sum, n=20")
    assert isinstance(fig, matplotlib.figure.Figure)
    fig.savefig(tmp_path / "tree.png")
    assert (tmp_path / "tree.png").stat().st_size > 1000
    deep = viz.summation_tree(precision.order_tree("sequential", 3000))  # no recursion limit
    assert isinstance(deep, matplotlib.figure.Figure)
