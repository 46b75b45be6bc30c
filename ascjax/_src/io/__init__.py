"""Files in and out: .bin I/O, the streaming engine, the `ascjax run` runners, comparison with
NPU dumps."""
