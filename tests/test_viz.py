"""ascjax.viz: every drawing renders for every supported type, and what it prints is the
instruction's bits (value texts carry a gid; exact texts read back to the same bits)."""

import re
import subprocess
import sys

import numpy as np
import pytest

import ascjax
from ascjax import viz
from ascjax._src.formats import FORMATS
from ascjax._src.isa.gather import GATHER_TYPES
from ascjax._src.isa.reduce_register import REDUCE_SUM_DATABLOCK_TYPES
from ascjax._src.isa.squeeze import SQUEEZE_TYPES
from ascjax._src.viz import values as viz_values

pytest.importorskip("matplotlib")


def rendered(fig, ink: float = 0.02) -> np.ndarray:
    """The figure as RGB pixels (Agg, low dpi), checked to be a real, non-blank picture."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig.set_dpi(30)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    pixels = np.asarray(canvas.buffer_rgba())[..., :3].astype(np.float64)
    assert pixels.shape[0] > 80 and pixels.shape[1] > 150
    assert pixels.std() > 2
    assert np.mean(pixels.min(axis=-1) < 200) > ink  # some ink, not a blank page
    return pixels


def random_values(name: str, n: int, seed: int = 0) -> np.ndarray:
    """n finite values of an Ascend type in its storage dtype, from random bit patterns."""
    fmt = FORMATS[name]
    rng = np.random.default_rng(seed)
    if fmt.kind == "float" and not fmt.packed and fmt.storage_dtype.kind != "u":
        x = rng.standard_normal(n).astype(np.float32) * 3
        return x.astype(fmt.storage_dtype)
    raw = rng.integers(0, 256, n * fmt.storage_dtype.itemsize, dtype=np.uint8)
    if name == "hifloat8_t":
        raw[raw == 0x80] = 0x01  # no NaN
    return raw.view(fmt.storage_dtype)


def texts(fig, prefix: str) -> dict[str, str]:
    return {t.get_gid(): t.get_text() for ax in fig.axes for t in ax.texts
            if (t.get_gid() or "").startswith(prefix)}


def bits(values) -> np.ndarray:
    a = np.asarray(values)
    return a.view(f"uint{a.dtype.itemsize * 8}") if a.dtype.kind != "i" else a


def read_back(text: str, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return np.array(int(text), dtype)
    return np.array(float(text)).astype(dtype)


def test_import_draws_nothing():
    code = ("import sys, numpy as np, ascjax, ascjax.viz as v; assert 'matplotlib' not in "
            "sys.modules; v.register(np.zeros(64, np.float32)); "
            "assert 'matplotlib.pyplot' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", list(FORMATS))
def test_register_every_format(name):
    fmt = FORMATS[name]
    x = random_values(name, fmt.lanes)
    fig = viz.register(x, ascjax.create_mask("PAT_M3", name), dtype=name)
    rendered(fig)
    assert texts(fig, "lane:")  # values printed where they fit


@pytest.mark.parametrize("width", ["b8", "b16", "b32"])
def test_mask(width):
    rendered(viz.mask(ascjax.create_mask("PAT_VL16", "b32"), width))


def test_register_rejects_a_batch():
    with pytest.raises(ValueError, match="one register"):
        viz.register(np.zeros((2, 64), np.float32))


@pytest.mark.parametrize("name", list(REDUCE_SUM_DATABLOCK_TYPES))
def test_reduce_tree_draws_the_instructions_bits(name):
    fmt = FORMATS[name]
    x = random_values(name, fmt.lanes, seed=1)
    if fmt.kind == "float":  # rounding in the tree, subnormals, a signed zero
        x[0], x[1], x[2], x[3] = 2048, 1, np.finfo(x.dtype).smallest_subnormal, -0.0
    mask = ascjax.create_mask("PAT_M3", name)
    dst = ascjax.reduce_sum_datablock(x, mask)
    levels = ascjax.reduce_sum_datablock_levels(x, mask)
    for block in (0, 5):
        fig = viz.reduce_sum_datablock(x, mask, block=block)
        rendered(fig)
        drawn = texts(fig, "level:")
        assert len(drawn) == sum(np.asarray(level).shape[-1] for level in levels)
        for gid, text in drawn.items():
            lv, k = map(int, gid.split(":")[1:])
            want = np.asarray(levels[lv])[block, k]
            np.testing.assert_array_equal(bits(read_back(text, want.dtype)), bits(want))
        root = read_back(drawn[f"level:{len(levels) - 1}:0"], np.asarray(dst).dtype)
        np.testing.assert_array_equal(bits(root), bits(np.asarray(dst)[block]))


def test_reduce_tree_marks_rounding():
    x = np.ones(128, np.float16)
    x[0] = 2048
    fig = viz.reduce_sum_datablock(x, ascjax.create_mask("PAT_ALL", "half"))
    notes = [t.get_text() for t in fig.axes[0].texts if t.get_gid() is None]
    assert "-1" in notes  # 2048 + 1 rounds to 2048
    assert "2062" in fig.axes[0].get_title()


@pytest.mark.parametrize("name", ["half", "float"])
def test_pair_reduce_sum_draws_the_instructions_bits(name):
    dtype = FORMATS[name].storage_dtype
    src = random_values(name, 512, seed=2)
    dst = np.full(200, 7, dtype)
    mask = 100 if name == "half" else [0x0F0F0F0F0F0F0F0F]
    args = (3, mask, 1, 2, 4)
    out = np.asarray(ascjax.pair_reduce_sum(dst, src, *args))
    for repeat in (0, 2):
        fig = viz.pair_reduce_sum(dst, src, *args, repeat=repeat)
        rendered(fig)
        drawn = texts(fig, "out:")
        assert drawn
        for gid, text in drawn.items():
            target = int(gid.split(":")[2])
            np.testing.assert_array_equal(bits(read_back(text, dtype)),
                                          bits(out[target]))


@pytest.mark.parametrize("row", GATHER_TYPES, ids="-".join)
def test_gather_every_combination(row):
    from matplotlib.text import Annotation

    dst_name, src_name, idx_name = row
    src = random_values(src_name, 300, seed=3)
    idx_fmt = FORMATS[idx_name]
    index = np.random.default_rng(4).integers(0, 300, idx_fmt.lanes).astype(idx_fmt.storage_dtype)
    mask = ascjax.create_mask("PAT_M3", idx_name)
    fig = viz.asc_gather(src, index, mask, dst_dtype=dst_name, dtype=src_name, lanes=(2, 14))
    rendered(fig)
    arrows = [t for t in fig.axes[1].texts if isinstance(t, Annotation)]
    assert len(arrows) == int(np.asarray(ascjax.create_mask("PAT_M3", idx_name))[
        ::idx_fmt.width][2:14].sum())
    if FORMATS[dst_name].kind != "float":
        out = np.asarray(ascjax.asc_gather(src, index, mask, dst_dtype=dst_name, dtype=src_name))
        for gid, text in texts(fig, "dst:").items():
            assert int(text) == int(out[int(gid.split(":")[1])])


@pytest.mark.parametrize("name", SQUEEZE_TYPES)
def test_squeeze_every_type(name):
    fmt = FORMATS[name]
    regs = random_values(name, 2 * fmt.lanes, seed=5).reshape(2, fmt.lanes)
    mask = ascjax.create_mask("PAT_M3", name)
    fig = viz.squeeze_and_storeunalign(regs, mask, dst_addr=3 * fmt.width, dtype=name)
    rendered(fig)
    ub, state = ascjax.make_ub(), ascjax.squeeze_and_storeunalign_init()
    for reg in regs:
        ub, _, state = ascjax.squeeze_and_storeunalign(ub, 3 * fmt.width, state, reg, mask,
                                                       dtype=name)
    ar = int(ascjax.get_squeeze_status(state))
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert len(titles) == 3 and f"-> {ar};" in titles[1] and "finalize" in titles[2]


def test_summation_tree_of_nested_tuples():
    rendered(viz.summation_tree((((0, 1), 2), (3, (4, 5))), title="hand-written"), ink=0.002)
    rendered(viz.summation_tree(tuple(range(4))), ink=0.002)  # one 4-operand add


def test_summation_tree_of_revealed_order():
    tree = ascjax.precision.reveal_order(lambda x: np.sum(x, axis=-1), 16, dtype="float")
    rendered(viz.summation_tree(tree), ink=0.002)


@pytest.mark.parametrize("name", ["float", "half", "int8_t", "hifloat8_t", "uint32_t"])
def test_squeeze_register_draws_the_instructions_dst(name):
    from ascjax._src.isa.squeeze import REGISTER_SQUEEZE_TYPES

    assert name in REGISTER_SQUEEZE_TYPES
    fmt = FORMATS[name]
    x = random_values(name, fmt.lanes, seed=3)
    mask = ascjax.create_mask("PAT_M3", name)
    kw = {"dtype": name} if fmt.storage_dtype == np.uint8 and name != "uint8_t" else {}
    fig = viz.squeeze_register(x, mask, lanes=(0, 12), **kw)
    rendered(fig)
    out = np.asarray(ascjax.squeeze(x, mask, **kw))
    drawn = texts(fig, "dst:")
    assert sorted(int(g.split(":")[1]) for g in drawn) == list(range(12))
    from ascjax._src.viz.values import element_values, labels

    shown = element_values(out, fmt)[:, 0]
    for gid, text in drawn.items():             # the instruction's value, as it fits the cell
        assert text in labels(shown[int(gid.split(":")[1])], fmt)
    arrows = [a for a in fig.axes[0].texts if a.get_text() == "" and a.arrow_patch is not None]
    assert len(arrows) == 4                     # lanes 0, 3, 6, 9 of the first 12


def test_unsqueeze_register_draws_the_prefix_count():
    m = np.zeros(64, bool)
    m[[0, 2, 3, 9]] = True
    fig = viz.unsqueeze_register(np.zeros(64, np.uint32), m, lanes=(0, 12))
    rendered(fig)
    drawn = {int(g.split(":")[1]): int(t) for g, t in texts(fig, "dst:").items()}
    assert drawn == {i: int(v) for i, v in enumerate(
        np.asarray(ascjax.unsqueeze(np.zeros(64, np.uint32), m))[:12])}
    assert [drawn[i] for i in (0, 1, 3, 4, 10)] == [0, 1, 2, 3, 4]   # by hand
    with pytest.raises(ValueError, match=r"viz.unsqueeze_register: lanes=\(5, 5\)"):
        viz.unsqueeze_register(np.zeros(64, np.uint32), m, lanes=(5, 5))
def test_gather_mask_patterns_every_built_in_pattern():
    """Each row's rsvdCnt is the count the page's bit string gives one repeat."""
    fig = viz.gather_mask_patterns(("half", "float", "int8_t"))
    rendered(fig)
    counts = texts(fig, "count:")
    per = {1: 2, 2: 2, 3: 4, 4: 4, 5: 4, 6: 4, 7: 1}        # one element in every `per`
    for name, lanes in (("half", 128), ("float", 64), ("int8_t", 256)):
        for p, every in per.items():
            assert counts[f"count:{name}:{p}"] == f"rsvdCnt {lanes // every}"
    with pytest.raises(ValueError, match="pattern 7 is not a built-in pattern on product "
                                         "'inference AI Core'"):
        viz.gather_mask_patterns(config=ascjax.Config(product="inference AI Core"))
    with pytest.raises(TypeError, match="int8_t is not a GatherMask type on product 'A2'"):
        viz.gather_mask_patterns(("int8_t",), (1,), config=ascjax.Config(product="A2"))


def test_fp8_given_as_uint8_bits_is_drawn_as_its_float8_array():
    """uint8 bits with dtype= draw the same value texts as the float8 array (the shortest text
    that reads back in fp8_e5m2, "2e-5" for code 0x01 = 2**-16, not 4 digits, "1.526e-5")."""
    codes = np.arange(256, dtype=np.uint8)
    mask = np.ones(256, bool)
    name = "fp8_e5m2_t"
    drawn = [texts(viz.squeeze_register(x, mask, dtype=name, lanes=(0, 12)), "dst:")
             for x in (codes, codes.view(FORMATS[name].storage_dtype))]
    assert drawn[0] == drawn[1]
    assert drawn[0]["dst:1"] == "2e-5"


# --- a notebook experimenter's review (stop 44) -------------------------------------------------

def _value_texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_pair_reduce_sum_draws_the_mask_states_calls():
    """viz.pair_reduce_sum took no is_set_mask / mask_state, so a call under SetVectorMask or
    Counter mode could not be drawn. Under the mask state's words it draws what the same
    words as the mask argument compute; in Counter mode (300 half elements: 3 repeats, the last
    of 44) the elements past the count are off, and a repeat before the last draws what it
    wrote where the last one wrote over it."""
    src = random_values("half", 512, seed=7)
    dst = np.full(200, 7, np.float16)
    words = np.array([0x00FF00FF00FF00FF, 0x0F0F0F0F0F0F0F0F], np.uint64)  # low, high
    state = ascjax.set_vector_mask(int(words[1]), int(words[0]), dtype="half")
    want = np.asarray(ascjax.pair_reduce_sum(dst, src, 3, words, 1, 2, 4))
    fig = viz.pair_reduce_sum(dst, src, 3, ascjax.MASK_PLACEHOLDER, 1, 2, 4, repeat=1,
                              is_set_mask=False, mask_state=state)
    rendered(fig)
    assert "PairReduceSum<half, false>" in fig.texts[0].get_text()
    drawn = texts(fig, "out:")
    assert drawn
    for gid, text in drawn.items():
        assert bits(read_back(text, np.float16)) == bits(want[int(gid.split(":")[2])])

    counter = ascjax.set_vector_mask(300, dtype="half", mode="counter",
                                     state=ascjax.set_mask_count())
    overlap = (3, ascjax.MASK_PLACEHOLDER, 0, 1, 8)  # every repeat writes dst[0:64]
    out = np.asarray(ascjax.pair_reduce_sum(dst, src, *overlap, is_set_mask=False,
                                            mask_state=counter))
    two = np.asarray(ascjax.pair_reduce_sum(dst, src, 2, 128, 0, 1, 8))  # repeats 0 and 1
    last = viz.pair_reduce_sum(dst, src, *overlap, repeat=2, is_set_mask=False,
                               mask_state=counter)
    assert "Counter mode, 300 elements over 3 repeats" in last.texts[0].get_text()
    off = [t for ax in last.axes for t in ax.texts if t.get_text() == "off"]
    assert len(off) == 128 - 44
    for gid, text in texts(last, "out:").items():
        assert bits(read_back(text, np.float16)) == bits(out[int(gid.split(":")[2])])
    before = viz.pair_reduce_sum(dst, src, *overlap, repeat=1, is_set_mask=False,
                                 mask_state=counter)
    rewritten = texts(before, "overwritten:")
    assert sorted(int(g.split(":")[1]) for g in rewritten) == list(range(22))  # by repeat 2
    for gid, text in rewritten.items():
        assert bits(read_back(text, np.float16)) == bits(two[int(gid.split(":")[2])])
    with pytest.raises(ValueError, match=r"repeat=3 must be in \[0, 3: Counter mode's 300"):
        viz.pair_reduce_sum(dst, src, *overlap, repeat=3, is_set_mask=False,
                            mask_state=counter)


def test_a_value_is_exact_or_marked_approximate_never_blank(recwarn):
    """65504 was drawn "7e4" (70000, past half's max) beside its sum "65500"; 1e-4 and fp4's
    -0.5 cells were blank; three fp8 values read "-0.0002"; drawing 65504 warned "overflow
    encountered in cast"."""
    src = np.resize(np.array([65504, 0, 1e-4, 0, -2048, 0], np.float16), 256)
    fig = viz.pair_reduce_sum(np.zeros(128, np.float16), src, 1,
                              np.array([0x5555555555555555, 0], np.uint64), 1, 1, 8)
    drawn = _value_texts(fig)
    assert "7e4" not in drawn and "-2e3" not in drawn
    assert "65500" in drawn  # the sums: 65504's shortest decimal that reads back
    half = ascjax.FORMATS["half"]
    assert viz_values.labels(65504.0, half)[1:] == ["\u22486.55e4", "\u22486.6e4", "\u22487e4"]
    # a shorter text that reads back as the value is no approximation (448 in e4m3: "450")
    assert viz_values.labels(448.0, ascjax.FORMATS["fp8_e4m3fn_t"])[:2] == ["450", "448"]
    fp4 = viz.register(np.arange(256, dtype=np.uint8), dtype="fp4x2_e2m1_t")
    assert _value_texts(fp4).count("-0.5") == 32  # every -0.5 nibble, none blank
    e5m2 = _value_texts(viz.register(np.arange(256, dtype=np.uint8), dtype="fp8_e5m2_t"))
    assert {"-0.00015", "-0.00018", "-0.0002"} <= set(e5m2)
    viz.register(np.full(128, 65504, np.float16))
    assert not [w for w in recwarn if "overflow" in str(w.message)]


def test_mask_per_element_and_bad_types():
    """The per-element form the docstring promises raised _spread()'s TypeError."""
    for lanes, dtype in ((128, "half"), (64, "float")):
        rendered(viz.mask(np.arange(lanes) % 3 == 0, dtype))
    with pytest.raises(TypeError, match=r"viz\.mask: dtype 'b64' is not a mask type; valid: "
                                        r"b8, b16, b32"):
        viz.mask(np.ones(256, bool), "b64")


@pytest.mark.parametrize("tree, got", [("abc", "str 'abc'"), ([[0, 1], 2], "list"),
                                       (((0, 1), -1), "int -1 in it"), ((0,), "tuple (0,)")])
def test_summation_tree_refuses_what_is_not_a_tree(tree, got):
    """A str looped for ever (a hung kernel); a list gave int()'s bare TypeError."""
    with pytest.raises(TypeError, match=r"viz\.summation_tree: a tree is nested tuples of "
                                        r"input indices .* got " + re.escape(got)):
        viz.summation_tree(tree)


def test_picture_errors_name_the_picture():
    ones = np.ones(64, np.float32)
    mask = ascjax.create_mask("PAT_ALL", "float")
    with pytest.raises(TypeError, match=r"viz\.squeeze_register: src dtype fp4x2_e2m1_t is "
                                        r"not supported"):
        viz.squeeze_register(np.arange(256, dtype=np.uint8), np.ones(256, bool),
                             dtype="fp4x2_e2m1_t")
    with pytest.raises(ValueError, match=r"viz\.squeeze_and_storeunalign: src1 is one register "
                                         r"or \(calls, lanes\).* got src1 \(2, 64\), "
                                         r"squeeze_mask \(3, 64\)"):  # the third was ignored
        viz.squeeze_and_storeunalign(np.stack([ones, ones]), np.ones((3, 64), bool))
    with pytest.raises(TypeError, match=r"viz\.reduce_sum_datablock: src dtype int8_t is not "
                                        r"supported"):
        viz.reduce_sum_datablock(np.ones(256, np.int8), mask)
    rendered(viz.gather_mask_patterns(np.array(["half"]), np.arange(1, 8)))  # arrays too
    for bad in ((), "half"):
        with pytest.raises(TypeError, match=r"viz\.gather_mask_patterns: dtypes must be a "
                                            r"non-empty sequence"):
            viz.gather_mask_patterns(bad)


def test_gather_overview_is_scaled_to_the_lanes_read():
    """Inactive lanes' 0xFFFFFFF0 stretched the axis to 4.3e9: every active lane sat on 0."""
    idx = np.full(64, 0xFFFFFFF0, np.uint32)
    idx[:8] = [5, 5, 5, 2, 2, 9, 0, 1]
    fig = viz.asc_gather(np.arange(10, dtype=np.float32), idx, np.arange(64) < 8)
    top = fig.axes[0]
    assert top.get_ylim()[1] < 20
    assert any("index above the axis" in t.get_text() for t in top.get_legend().get_texts())


def test_pair_outputs_a_later_repeat_overwrote_show_what_the_repeat_wrote():
    """Repeat 0's outputs, all overwritten by repeat 1 (dstRepStride 0), were "over" in the
    hatch of "both masked"; they now show the sums repeat 0 wrote."""
    src = np.arange(256).astype(np.float16)
    fig = viz.pair_reduce_sum(np.full(128, 9, np.float16), src, 2, 128, 0, 1, 8, repeat=0)
    drawn = texts(fig, "overwritten:")
    assert len(drawn) == 64 and not texts(fig, "out:")
    for gid, text in drawn.items():
        k = int(gid.split(":")[1])
        assert float(text) == float(np.float16(src[2 * k]) + np.float16(src[2 * k + 1]))


def test_fig_show_shows_a_picture_anywhere_in_a_notebook_cell(tmp_path, monkeypatch):
    """A figure showed only as a cell's last value: fig.show() raised matplotlib's "works only
    for figures managed by pyplot", so pictures drawn in a loop never appeared."""
    import nbclient
    import nbformat

    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import numpy as np, ascjax\nfrom ascjax import viz\n"
        "for p in ('PAT_M3', 'PAT_M4'):\n"
        "    viz.register(np.arange(64, dtype=np.float32), ascjax.create_mask(p, 'float')).show()\n"
        "print('done')")])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[0].outputs
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2, outputs
    fig = viz.register(np.arange(64, dtype=np.float32), ascjax.create_mask("PAT_M3", "float"))
    with pytest.raises(RuntimeError, match=r"not pyplot's .* fig\.savefig"):
        fig.show()  # no IPython here: the way to see it in a script


def test_gather_mask_patterns_legend_says_how_to_read_unnumbered_panels():
    """The legend promised "number: the dst element it lands in" while only panels of 64
    elements or fewer carry numbers (half, int8_t and bfloat16_t panels had none)."""
    def legend(dtypes):
        return [t.get_text() for t in viz.gather_mask_patterns(dtypes).legends[0].get_texts()]

    assert "number: the dst element it lands in" in legend(("float",))
    assert legend(("half",))[-1].startswith("the k-th kept element")
    both = legend(("half", "float"))[-1]
    assert both.startswith("number:") and "panels without numbers" in both


def test_the_unaligned_register_row_says_its_bytes_are_hex():
    """The src0 row prints raw bytes in hex, the UB rows values in decimal: int8 bytes read
    "49 52 55" above and "31 34 37" below, unexplained."""
    x = (np.arange(256) % 100).astype(np.int8)
    fig = viz.squeeze_and_storeunalign(x, np.arange(256) % 37 == 0, dst_addr=5, finalize=False)
    labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert "src0 (unaligned reg),\nbytes in hex" in labels


def test_asc_gather_widens_for_many_lanes_instead_of_dropping_values():
    """64 lanes of five-digit floats: every src and dst cell read "…" in a 13-inch figure,
    though the README says a value is never left out; the figure now widens with the lanes,
    as the compaction pictures do."""
    rng = np.random.default_rng(1)
    fig = viz.asc_gather((rng.standard_normal(100) * 1e4).astype(np.float32),
                         rng.integers(0, 100, 64).astype(np.uint32),
                         ascjax.create_mask("PAT_ALL", "float"), lanes=(0, 64))
    assert not [t for ax in fig.axes for t in ax.texts if t.get_text() == "…"]
    assert len(texts(fig, "dst:")) == 64
