"""Bits, rounding and the adder: the only place values are computed."""
