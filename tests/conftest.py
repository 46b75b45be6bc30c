"""Strict settings for every test: JAX type promotion is explicit, warnings are errors."""

import os
import warnings

import jax
import pytest
from hypothesis import HealthCheck, settings

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

settings.register_profile(
    "default", deadline=None, max_examples=int(os.environ.get("ASCJAX_EXAMPLES", "60")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("CI") == "true")
settings.load_profile("default")


@pytest.fixture(params=["eager", "jit"])
def variant(request):
    """Run a function eagerly or under jax.jit; the bits must agree."""
    return (lambda f: f) if request.param == "eager" else jax.jit
