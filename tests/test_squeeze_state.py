"""A ``SqueezeState`` passed in is checked (issue 14 item 5): a corrupt one is a clear error
naming the instruction, the field and the valid range, and nothing is written; under ``jit``
its shapes and dtypes are checked at trace time and its values as ``Config.out_of_range`` says.
The reference model refuses the same states."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import ascjax
from ascjax import Config, SqueezeState, reference

REG = np.arange(1, 65, dtype=np.float32)
ALL = np.ones(64, bool)
UB = np.zeros(512, np.uint8)
Z32 = np.zeros(32, np.uint8)


def state(ar, pending, tail=Z32):
    return SqueezeState(jnp.asarray(ar, jnp.int32), jnp.asarray(pending, jnp.int32),
                        jnp.asarray(tail))


def calls(st, addr=0):
    """The two calls that take a state, on the emulator and on the reference model."""
    ref_state = reference.SqueezeState(int(st.ar), int(st.pending), bytes(np.asarray(st.tail)))
    return {
        "squeeze_and_storeunalign": (
            lambda: ascjax.squeeze_and_storeunalign(UB, addr, st, REG, ALL),
            lambda: reference.squeeze_and_storeunalign(UB, addr, ref_state, REG, ALL)),
        "squeeze_and_storeunalign_finalize": (
            lambda: ascjax.squeeze_and_storeunalign_finalize(UB, addr, st),
            lambda: reference.squeeze_and_storeunalign_finalize(UB, addr, ref_state)),
    }


# By hand: with dst_addr 0 the pending bytes of AR = 40 are those of [32, 40): at most 8;
# with AR = 10 (no block filled yet) all 10; AR may reach the 512-byte UB's end.
@pytest.mark.parametrize("addr, ar, pending, field, valid", [
    (0, -1, 0, "ar", "[0, 512]"),
    (0, 600, 0, "ar", "[0, 512]"),
    (64, 449, 0, "ar", "[0, 448]"),
    (0, 10, -2, "pending", "[0, 10]"),
    (0, 10, 40, "pending", "[0, 10]"),
    (0, 40, 20, "pending", "[0, 8]"),
    (0, 64, 32, "pending", "[0, 0]"),     # > 32 pending bytes can never be held
    (4, 40, 13, "pending", "[0, 12]"),
])
def test_corrupt_values_name_the_field_and_the_range(addr, ar, pending, field, valid):
    st = state(ar, pending)
    value = pending if field == "pending" else ar
    for name, (emulator, ref) in calls(st, addr).items():
        with pytest.raises(IndexError, match=rf"^{name}: state\.{field}={value} is outside the "
                           rf"valid range {re.escape(valid)} .*nothing written"):
            emulator()
        with pytest.raises(IndexError, match=rf"{name}: state\.{field}=.* valid range"):
            ref()


def test_every_state_a_call_leaves_is_accepted():
    """Calls that end on, before and after block boundaries, a finalize in between: each
    state a call returns goes back in (the checks refuse nothing reachable)."""
    rng = np.random.default_rng(5)
    big = np.zeros(2048, np.uint8)
    for addr in (0, 4, 28, 100):
        ub, st = big, ascjax.squeeze_and_storeunalign_init()
        ref_ub, ref_st = big, reference.squeeze_and_storeunalign_init()
        for k in range(6):
            mask = rng.random(64) < (0.05, 0.5, 1.0)[k % 3]
            ub, _, st = ascjax.squeeze_and_storeunalign(ub, addr, st, REG, mask)
            ref_ub, _, ref_st = reference.squeeze_and_storeunalign(ref_ub, addr, ref_st, REG,
                                                                   mask)
            if k == 3:
                ub, st = ascjax.squeeze_and_storeunalign_finalize(ub, addr, st)
                ref_ub, ref_st = reference.squeeze_and_storeunalign_finalize(ref_ub, addr,
                                                                             ref_st)
        ub, st = ascjax.squeeze_and_storeunalign_finalize(ub, addr, st)
        ref_ub, _ = reference.squeeze_and_storeunalign_finalize(ref_ub, addr, ref_st)
        np.testing.assert_array_equal(np.asarray(ub), ref_ub)


@pytest.mark.parametrize("bad, error, match", [
    (None, TypeError, r"state must be an ascjax\.SqueezeState .*got None"),
    ((0, 0, Z32), TypeError, r"state must be an ascjax\.SqueezeState .*got tuple"),
    (SqueezeState(0.5, 0, Z32), TypeError,
     r"state\.ar must be an integer byte count, got dtype float32"),
    (SqueezeState(0, np.float32(1), Z32), TypeError, r"state\.pending must be an integer"),
    (SqueezeState(0, 0, np.zeros(31, np.uint8)), ValueError,
     r"state\.tail must be the 32-byte unaligned register, uint8 \(\.\.\., 32\); got uint8 \(31"),
    (SqueezeState(0, 0, np.zeros(32, np.int32)), ValueError, r"state\.tail must be .* got int32"),
    (SqueezeState(np.zeros(3, np.int32), 0, Z32), ValueError,
     r"the SqueezeState.s fields must share one batch shape .* state\.ar \(3,\), state\.pend"),
])
def test_wrong_types_and_shapes(bad, error, match):
    for where, call in (
            ("squeeze_and_storeunalign",
             lambda: ascjax.squeeze_and_storeunalign(UB, 0, bad, REG, ALL)),
            ("squeeze_and_storeunalign_finalize",
             lambda: ascjax.squeeze_and_storeunalign_finalize(UB, 0, bad))):
        with pytest.raises(error, match=f"^{where}: {match}"):
            call()
    # under jit the same, at trace time (the state is an argument: its leaves are traced)
    if isinstance(bad, SqueezeState):
        with pytest.raises(error, match=match):
            jax.jit(lambda s: ascjax.squeeze_and_storeunalign(UB, 0, s, REG, ALL))(bad)


def test_reference_refuses_non_states_and_short_tails():
    with pytest.raises(TypeError, match="squeeze_and_storeunalign: state must be a "
                       "SqueezeState, got None"):
        reference.squeeze_and_storeunalign(UB, 0, None, REG, ALL)
    with pytest.raises(ValueError, match="state.tail must hold 32 bytes, got 31"):
        reference.squeeze_and_storeunalign_finalize(UB, 0, reference.SqueezeState(0, 0,
                                                                                   bytes(31)))


def test_values_under_jit_follow_out_of_range():
    bad, good = state(40, 20), state(40, 8)
    run = jax.jit(lambda s: ascjax.squeeze_and_storeunalign(UB, 0, s, REG, ALL)[0])
    with pytest.raises(Exception, match=r"squeeze_and_storeunalign: state\.pending=20 is "
                       r"outside the valid range \[0, 8\]"):
        run(bad).block_until_ready()
    assert run(good).shape == (512,)
    fin = jax.jit(lambda s: ascjax.squeeze_and_storeunalign_finalize(UB, 0, s)[0])
    with pytest.raises(Exception, match=r"squeeze_and_storeunalign_finalize: state\.ar=-1 is "
                       r"outside the valid range \[0, 512\]"):
        fin(state(-1, 0)).block_until_ready()
    cfg = Config(out_of_range="checkify")
    checked = checkify.checkify(jax.jit(lambda s, a: ascjax.squeeze_and_storeunalign(
        UB, a, s, REG, ALL, config=cfg)[0]))
    err, _ = checked(bad, jnp.int32(0))
    assert "state.pending=20 is outside the valid range [0, 8]" in err.get()
    err, _ = checked(good, jnp.int32(0))
    assert err.get() is None
    err, _ = checked(good, jnp.int32(4))     # a traced dst_addr moves the bound: [0, 12]
    assert err.get() is None
    err, _ = checked(state(40, 13), jnp.int32(4))
    assert "state.pending=13 is outside the valid range [0, 12]" in err.get()
    ignore = Config(out_of_range="ignore")
    out = jax.jit(lambda s: ascjax.squeeze_and_storeunalign(UB, 0, s, REG, ALL,
                                                            config=ignore)[0])(bad)
    assert out.shape == (512,)


def test_a_batched_state_names_the_bad_register():
    st = state(np.array([40, 40, 40]), np.array([8, 0, 9]), np.zeros((3, 32), np.uint8))
    with pytest.raises(IndexError, match=r"state\.pending\[2\]=9 is outside the valid range "
                       r"\[0, 8\]"):
        ascjax.squeeze_and_storeunalign(UB, 0, st, REG, ALL)
    run = jax.vmap(lambda s: ascjax.squeeze_and_storeunalign(UB, 0, s, REG, ALL)[0])
    with pytest.raises(Exception, match=r"state\.pending=9 is outside the valid range \[0, 8\]"):
        jax.block_until_ready(run(st))
    good = st._replace(pending=jnp.array([8, 0, 8], jnp.int32))
    assert run(good).shape == (3, 512)
    with pytest.raises(ValueError, match=r"squeeze_and_storeunalign_finalize: the batch axes .* "
                       r"ub \(2, 512\), state\.tail \(3, 32\) do not broadcast"):
        ascjax.squeeze_and_storeunalign_finalize(np.zeros((2, 512), np.uint8), 0, good)


@pytest.mark.parametrize("addr", [np.uint32(0x80000000), np.uint32(0xFFFFFFF0), np.int32(-4),
                                  np.uint32(262144)])
def test_a_traced_dst_addr_outside_the_ub_faults_in_its_own_type(addr):
    """A review: under jit a uint32 dst_addr of 2^31 or more wrapped to a negative int32 and
    passed every check (0x80000000 wrote at UB[0..11]); it is now held to [0, UB size) in its
    own type, and named."""
    src = np.arange(1, 65, dtype=np.float32)
    keep = np.arange(64) < 3

    @jax.jit
    def store(a):
        ub, _, state = ascjax.squeeze_and_storeunalign(
            ascjax.make_ub(), a, ascjax.squeeze_and_storeunalign_init(), src, keep)
        return ascjax.squeeze_and_storeunalign_finalize(ub, a, state)

    with pytest.raises(Exception, match=rf"dst_addr={int(addr)} must be a UB byte address in "
                                        r"\[0, 262144\)"):
        jax.block_until_ready(store(addr))
    ub, state = store(np.uint32(64))  # a good one still stores its 12 bytes
    assert int(state.ar) == 12 and np.asarray(ub)[64:76].view(np.float32).tolist() == [1, 2, 3]
