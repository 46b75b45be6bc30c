"""Precision studies above the instruction set: orders, bounds, revealing trees."""
