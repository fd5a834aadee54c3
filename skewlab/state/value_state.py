"""The value-state cores in use: compiled (Cython) where they were built, else plain Python.

``pip install`` compiles :mod:`skewlab.state.value_state_compiled` when a C compiler and
Python's headers are there; where they are not, the install still succeeds and
:mod:`skewlab.state.value_state_python` -- the same classes, the same behaviour, slower -- is
used instead, with one warning saying so. ``SKEWLAB_PURE_PYTHON=1`` (or ``true``, ``yes``,
``on``) chooses the Python cores on purpose (the tests run the same model tests against both);
another value is ignored with a warning. :data:`IMPLEMENTATION` says which is in use, and every
benchmark result records it.

=========================  ================================================================
:class:`HeapValueState`    ``{key_group: {key: value}}`` (HashMapStateBackend)
:class:`SingleKeyValueState`  only the current key's value (FLIP-140), keys in order
:class:`WriteBackLru`      FLIP-325's write-back LRU cache of objects over a store
:class:`WriteBackTinyLfu`  the same write-back cache with W-TinyLFU's admission
:class:`CallbackValueState`  any backend's Python ``get`` / ``put`` / ``delete`` (RocksDB)
=========================  ================================================================

Example::

    >>> from skewlab.state.value_state import IMPLEMENTATION, HeapValueState
    >>> IMPLEMENTATION in ("compiled", "python")
    True
    >>> heap = HeapValueState(); heap.put(0, "a", 1); heap.get(0, "a")
    1
"""

from __future__ import annotations

import importlib
import os
import warnings

__all__ = [
    "IMPLEMENTATION",
    "CallbackValueState",
    "HeapValueState",
    "SingleKeyValueState",
    "ValueStateCore",
    "WriteBackLru",
    "WriteBackTinyLfu",
]

#: Set to ``1`` to use the pure-Python cores even where the compiled ones are built.
PURE_PYTHON_ENV = "SKEWLAB_PURE_PYTHON"


#: what ``$SKEWLAB_PURE_PYTHON`` may say: on, or off (unset is off)
PURE_PYTHON_VALUES = {"1": True, "true": True, "yes": True, "on": True,
                      "0": False, "false": False, "no": False, "off": False, "": False}  # fmt: skip


def pure_python_wanted(value: str | None = None) -> bool:
    """Whether ``value`` (default ``$SKEWLAB_PURE_PYTHON``) asks for the pure-Python cores:
    ``1``/``true``/``yes``/``on`` do, ``0``/``false``/``no``/``off`` or unset do not; any other
    value is ignored with a warning that says what is allowed.

    Example::

        >>> pure_python_wanted("yes"), pure_python_wanted("0")
        (True, False)
    """
    value = os.environ.get(PURE_PYTHON_ENV, "") if value is None else value
    wanted = PURE_PYTHON_VALUES.get(value.strip().lower())
    if wanted is None:
        warnings.warn(
            f"skewlab: {PURE_PYTHON_ENV}={value!r} is neither on (1, true, yes, on) nor off "
            "(0, false, no, off): ignored, the compiled cores are used where they are built",
            RuntimeWarning,
            stacklevel=3,
        )
        return False
    return wanted


def _load():
    if pure_python_wanted():
        import skewlab.state.value_state_python as value_state_python

        return value_state_python, "python"
    try:  # an extension module that may not exist: loaded by name
        value_state_compiled = importlib.import_module("skewlab.state.value_state_compiled")
    except ImportError:
        import skewlab.state.value_state_python as value_state_python

        warnings.warn(
            "skewlab: the compiled cores are not built (no C compiler when skewlab was "
            "installed); using the pure-Python cores, which give the same results more slowly. "
            "Install a C compiler and Python's headers, then `pip install -e .` again.",
            RuntimeWarning,
            stacklevel=3,
        )
        return value_state_python, "python"
    return value_state_compiled, "compiled"


_cores, IMPLEMENTATION = _load()
ValueStateCore = _cores.ValueStateCore
CallbackValueState = _cores.CallbackValueState
HeapValueState = _cores.HeapValueState
SingleKeyValueState = _cores.SingleKeyValueState
WriteBackLru = _cores.WriteBackLru
WriteBackTinyLfu = _cores.WriteBackTinyLfu
