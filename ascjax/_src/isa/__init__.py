"""The emulated instructions and the lane/repeat machinery they share."""
