"""Files in and out: .bin I/O, the streaming bulk engine, comparison against NPU dumps."""
