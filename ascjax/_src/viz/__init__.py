"""Pictures of what the instructions do: one module per picture, all drawn on a ``Canvas``
(canvas.py) with the labels of values.py; ``ascjax.viz`` is the public face."""
