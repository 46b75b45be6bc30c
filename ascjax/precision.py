"""Precision studies: emulate a summation order bit for bit in a target format, against the
exact sum and Higham's bounds; reveal the order of a black-box sum.

* ``sum(x, dtype=, order=)``: the last axis of ``x`` summed in ``dtype`` along one of
  ``ORDERS`` ("sequential", "adjacent_tree", "repeat_sequential", "repeat_tree",
  "repeat_vector_merge", "numpy_pairwise", "kahan"), rounding exactly where that order rounds.
* ``exact_sum`` (rounded once to the format), ``exact_sum_float64``, ``exact_sums``;
  ``to_format`` (round any array once to a format).
* ``errors`` (absolute, relative, ULPs), ``error_bound`` / ``higham_gamma`` (Higham's
  gamma_k bounds), ``tree_depth``, ``order_tree``, ``unit_roundoff``, ``gamma``, ``ulp``.
* ``reveal_order(sum_fn, n)``: the summation tree of a black-box sum (FPRev's method);
  ``ascjax.viz.summation_tree`` draws one.
* The study behind ``ascjax study``: ``make_inputs``, ``measure``, ``check_study``,
  ``prepare_output``, ``run_study``, ``write_study``, ``markdown`` (with ``findings``),
  ``plot``; and ``golden_mismatch`` (NumPy goldens against the
  hardware's DataBlock tree).
"""

from ascjax._src.study.orders import ORDERS, SUM_FORMATS
from ascjax._src.study.precision import (
    error_bound,
    errors,
    exact_sum,
    exact_sum_float64,
    exact_sums,
    gamma,
    higham_gamma,
    order_tree,
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
    DEFAULT_SIZES,
    DEFAULT_TRIALS,
    DISTRIBUTIONS,
    ORDER_DESCRIPTIONS,
    Study,
    check_study,
    findings,
    golden_mismatch,
    make_inputs,
    markdown,
    measure,
    plot,
    prepare_output,
    run_study,
    write_study,
)

__all__ = [
    "DEFAULT_DISTRIBUTIONS",
    "DEFAULT_FORMATS",
    "DEFAULT_SIZES",
    "DEFAULT_TRIALS",
    "DISTRIBUTIONS",
    "ORDERS",
    "ORDER_DESCRIPTIONS",
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
    "golden_mismatch",
    "higham_gamma",
    "make_inputs",
    "markdown",
    "measure",
    "order_tree",
    "plot",
    "prepare_output",
    "reveal_order",
    "run_study",
    "sum",
    "to_format",
    "tree_depth",
    "ulp",
    "unit_roundoff",
    "write_study",
]
