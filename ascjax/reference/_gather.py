"""asc_gather (SPEC 6), on bit patterns."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config
from ascjax._src.formats import FORMATS

from ._scalar import UINT, VL_BYTES, element_mask, format_name, lane_bytes


def gather(src: Any, index: Any, mask: Any, *, dst_dtype: Any = None, dtype: Any = None,
           config: Config | None = None) -> np.ndarray:
    """Reference ``asc_gather`` for one index register: ``dst[i] = src[index[i]]`` on bits."""
    del config                          # no reading changes a gather of in-range lanes
    src = np.asarray(src)
    index = np.asarray(index)
    src_name = format_name(src, dtype)
    dst_name = str(dst_dtype) if dst_dtype is not None else src_name
    src_w, dst_w = lane_bytes(src_name), lane_bytes(dst_name)
    if index.dtype not in (np.uint16, np.uint32) or index.shape != (VL_BYTES // index.itemsize,):
        raise TypeError(f"gather: index must be uint16 (128,) or uint32 (64,), got "
                        f"{index.dtype} {index.shape}")
    index_lanes = index.size
    mask = element_mask(mask, index_lanes, index.itemsize, "gather")
    dst_lanes = VL_BYTES // dst_w
    # b8 -> b16 widening: one dst lane per index lane. Same type narrower than the index: value
    # i goes to dst element 2i, odd elements stay 0.
    step = dst_lanes // index_lanes
    if step not in (1, 2) or (dst_w != src_w and (src_w, dst_w) != (1, 2)):
        raise TypeError(f"gather: unsupported ({dst_name}, {src_name}, {index.dtype})")
    src_bits = src.reshape(-1).view(UINT[src_w])
    dst_bits = np.zeros(dst_lanes, UINT[dst_w])
    for i in range(index_lanes):
        if not mask[i]:
            continue                    # inactive: never range-checked, dst lane 0
        j = int(index[i])
        if j >= src_bits.size:
            raise IndexError(f"gather: active lane {i} reads src element {j}, past its end "
                             f"{src_bits.size}")
        dst_bits[step * i] = src_bits[j]    # unsigned bits: zero extension when widening
    return dst_bits.view(FORMATS[dst_name].storage)
