"""Files in and out: .bin I/O, the streaming engine and the `ascjax run` runners, comparison against NPU dumps."""
