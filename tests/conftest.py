"""Strict settings for every test: JAX type promotion is explicit, warnings are errors."""

import os
import shutil
import sys
import tempfile
import warnings

import jax
import pytest
from hypothesis import HealthCheck, settings

from ascjax._src import native

jax.config.update("jax_numpy_dtype_promotion", "strict")

# When a Hypothesis test fails, its pytest plugin imports libcst to suggest a patch; libcst
# trips a DeprecationWarning that "filterwarnings = error" turns into an INTERNALERROR ending
# the session. Import it once here, with warnings off.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import hypothesis.extra._patching  # noqa: F401
    except ImportError:
        pass

# The compaction kernels build (or load from their cache) once per process, here: where they
# cannot (no C++ compiler), the warning that says so is shown once, not raised as an error by
# "filterwarnings = error" in every test that compacts; the XLA path then runs everywhere and
# tests/test_native.py skips.
with warnings.catch_warnings(record=True) as _caught:
    warnings.simplefilter("always")
    native.enabled()
for _warning in _caught:
    print(f"\n{_warning.message}", file=sys.stderr)

# The default (CI) profile: 10 examples per property test, each a batch of registers (in CI
# derandomized, so the same 10 every run; many examples draw a new shape and so compile a new
# program: 25 made the suite a third slower). The deep profile for occasional long fuzzing:
# ASCJAX_EXAMPLES=600 (tests/strategies.few_examples and the registry harness scale with it too).
settings.register_profile(
    "default", deadline=None, max_examples=int(os.environ.get("ASCJAX_EXAMPLES", "10")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("CI") == "true")
settings.load_profile("default")

# Most of the suite's time is XLA compiling, and many tests compile the same program under a
# different Python-level cache key (a Config, a wrapper): a compilation cache private to this
# process (so no xdist worker reads another's half-written entry) serves the repeats. It gives
# the executable a compile would: the tests check the same code.
_CACHE_DIR = tempfile.mkdtemp(prefix="ascjax-xla-cache-")
jax.config.update("jax_compilation_cache_dir", _CACHE_DIR)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)


def pytest_unconfigure(config):
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)


@pytest.fixture(params=["eager", "jit"])
def variant(request):
    """Run a function eagerly or under jax.jit; the bits must agree."""
    return (lambda f: f) if request.param == "eager" else jax.jit


# Slowest files first: the suite runs with --dist loadfile (pyproject), each file on one xdist
# worker so that its tests reuse the programs that worker compiled; starting the longest files
# first keeps both workers busy to the end instead of one finishing a long file alone (the
# order of `pytest --durations=0`'s per-file totals; it changes the time, never a result).
_LONGEST_FIRST = ("test_registry.py", "test_precision_host.py", "test_reduce_family.py",
                  "test_properties.py", "test_viz.py", "test_study_bounds.py",
                  "test_precision.py", "test_runners.py", "test_notebooks.py", "test_bulk.py",
                  "test_extreme.py", "test_probe.py", "test_format_movement.py",
                  "test_readme.py", "test_benchmarks.py", "test_mpfr.py", "test_reduce_index.py",
                  "test_squeeze_family.py", "test_reduce_tensor_minmax.py",
                  "test_instructions.py", "test_codecs.py")


def pytest_collection_modifyitems(items):
    def rank(item):
        name = item.path.name
        return _LONGEST_FIRST.index(name) if name in _LONGEST_FIRST else len(_LONGEST_FIRST)

    items.sort(key=rank)  # stable: each file keeps its own order
