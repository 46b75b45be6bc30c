"""The option schema of ``ascjax run``: one ``Option`` per parameter, the ``Config`` fields as
options, and the argument types the command line and ``run_bin`` share."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .config import _CHOICES, PRODUCT_ALIASES, PRODUCTS, Config, product_key
from .formats import BY_ALIAS, resolve


@dataclasses.dataclass(frozen=True)
class Option:
    """One parameter of a bulk run: ``--name-with-dashes`` on the command line. ``low`` (an int
    option's least valid value) is checked by ``run_bin``, with the option's name; ``group``
    titles the section of ``--help`` it is listed in (one call form's options)."""

    name: str
    help: str
    type: Callable = str
    default: Any = None
    choices: tuple | None = None
    required: bool = False
    flag: bool = False
    low: int | None = None
    group: str = ""


def ascend_type(text: Any) -> Any:
    """An Ascend type name from it, an alias (float16 -> half) or, from Python, a NumPy type
    (np.float16 -> half); anything else passes through to the choices check, which lists the
    valid ones."""
    if isinstance(text, str):
        return BY_ALIAS[text].name if text in BY_ALIAS else text
    try:
        return resolve(text).name
    except TypeError:
        return text


def byte_address(text: str) -> int:
    """A byte address as written in kernels: decimal or 0x hex."""
    return int(text, 0)


def product_option(choices: tuple[str, ...] = tuple(PRODUCTS), default: str = "950") -> Option:
    """``--product``, offering ``choices`` (``PRODUCTS`` keys) by key or chip tag."""
    tags = ", ".join(f"{tag} = {key}" for tag, key in PRODUCT_ALIASES.items() if key in choices)
    tags = f", or the pages' chip tag ({tags})" if tags else ""
    return Option("product", f"Ascend product (Config.product){tags}; default {default}",
                  product_key, default=default, choices=choices)


def _config_options() -> tuple[Option, ...]:
    """One option per ``Config`` field (out-of-range faults always raise ``IndexError`` in a
    bulk run, checked per chunk)."""
    opts = [product_option()]
    for field, choices in _CHOICES.items():
        if field != "out_of_range":
            default = getattr(Config(), field)
            shown = "as the --product's page says" if default is None else default
            opts.append(Option(field, f"Config.{field} (default {shown})", default=default,
                               choices=choices))
    opts.append(Option("ub_bytes", "usable UB size in bytes (Config.ub_bytes)", int,
                       Config().ub_bytes))
    return tuple(opts)


CONFIG_OPTIONS = _config_options()


def config_from_options(opts: dict) -> Config:
    """The ``Config`` the ``CONFIG_OPTIONS`` in ``opts`` name (a runner lists those its
    instruction reads; the others keep their defaults); faults are checked per chunk."""
    return Config(**{o.name: opts[o.name] for o in CONFIG_OPTIONS if o.name in opts},
                  out_of_range="checkify")
