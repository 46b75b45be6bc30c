"""Precision studies: emulate a summation order bit for bit in a target format, against the
exact sum and Higham's bounds; reveal the order of a black-box sum.

* ``sum(x, dtype=, order=)``: the last axis of ``x`` summed in ``dtype`` along one of
  ``ORDERS`` ("sequential", "adjacent_tree", "repeat_sequential", "repeat_tree",
  "repeat_vector_merge", "numpy_pairwise", "kahan"), rounding exactly where that order rounds.
* ``exact_sum`` (rounded once to the format), ``exact_sum_float64``, ``exact_sums``;
  ``to_format`` (round any array once to a format).
* ``errors`` (absolute, relative, ULPs), ``error_bound`` / ``higham_gamma`` (Higham's
  gamma_k bounds), ``probabilistic_bound`` / ``higham_mary_gamma`` (Higham & Mary's
  gamma~_k(lambda), with ``gamma_tilde``, ``higham_mary_lambda``, ``higham_mary_failure``),
  ``tree_depth``, ``order_tree``, ``unit_roundoff``, ``gamma``, ``ulp``.
* ``reveal_order(sum_fn, n)``: the summation tree of a black-box sum (FPRev's method);
  ``ascjax.viz.summation_tree`` draws one.
* The study behind ``ascjax study``: ``make_inputs``, ``measure``, ``check_study``,
  ``prepare_output``, ``run_study``, ``write_study``, ``markdown`` (with ``findings``),
  ``plot``, ``plot_kappa``, ``plot_distribution``, the long-vector sweep ``run_long_vectors``
  over the hardware's ``PATTERNS`` (``order_sum``, ``order_depth``, ``order_gammas``;
  ``STUDY_ORDERS`` = ``ORDERS`` and the patterns, the one list the study and every bound
  helper take); and
  ``golden_mismatch`` (NumPy goldens against the
  hardware's DataBlock tree).
"""

from ascjax._src.study.orders import ORDERS, SUM_FORMATS
from ascjax._src.study.precision import (
    DEFAULT_FAILURE,
    HIGHAM_MARY,
    error_bound,
    errors,
    exact_sum,
    exact_sum_float64,
    exact_sums,
    gamma,
    gamma_tilde,
    higham_gamma,
    higham_mary_failure,
    higham_mary_gamma,
    higham_mary_lambda,
    order_tree,
    probabilistic_bound,
    sum,
    to_format,
    tree_depth,
    ulp,
    unit_roundoff,
)
from ascjax._src.study.reveal import reveal_order
from ascjax._src.study.study import (
    DEFAULT_DISTRIBUTIONS,
    DEFAULT_FORMATS,
    DEFAULT_KAPPA_N,
    DEFAULT_KAPPAS,
    DEFAULT_SIZES,
    DEFAULT_TRIALS,
    DISTRIBUTIONS,
    LONG_ORDERS,
    LONG_SIZES,
    LONG_TRIALS,
    ORDER_DESCRIPTIONS,
    PATTERNS,
    STAGNATION_SHARE,
    STUDY_ORDERS,
    Study,
    check_study,
    findings,
    golden_mismatch,
    lost_addends,
    make_inputs,
    markdown,
    measure,
    order_depth,
    order_gammas,
    order_sum,
    plot,
    plot_distribution,
    plot_kappa,
    prepare_output,
    run_long_vectors,
    run_study,
    write_study,
)

__all__ = [
    "DEFAULT_DISTRIBUTIONS",
    "DEFAULT_FAILURE",
    "DEFAULT_FORMATS",
    "DEFAULT_KAPPAS",
    "DEFAULT_KAPPA_N",
    "DEFAULT_SIZES",
    "DEFAULT_TRIALS",
    "DISTRIBUTIONS",
    "HIGHAM_MARY",
    "LONG_ORDERS",
    "LONG_SIZES",
    "LONG_TRIALS",
    "ORDERS",
    "ORDER_DESCRIPTIONS",
    "PATTERNS",
    "STAGNATION_SHARE",
    "STUDY_ORDERS",
    "SUM_FORMATS",
    "Study",
    "check_study",
    "error_bound",
    "errors",
    "exact_sum",
    "exact_sum_float64",
    "exact_sums",
    "findings",
    "gamma",
    "gamma_tilde",
    "golden_mismatch",
    "higham_gamma",
    "higham_mary_failure",
    "higham_mary_gamma",
    "higham_mary_lambda",
    "lost_addends",
    "make_inputs",
    "markdown",
    "measure",
    "order_depth",
    "order_gammas",
    "order_sum",
    "order_tree",
    "plot",
    "plot_distribution",
    "plot_kappa",
    "prepare_output",
    "probabilistic_bound",
    "reveal_order",
    "run_long_vectors",
    "run_study",
    "sum",
    "to_format",
    "tree_depth",
    "ulp",
    "unit_roundoff",
    "write_study",
]
