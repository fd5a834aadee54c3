"""The skew doctor: a user's own records -- which keys are hot, where their load lands in Flink,
Spark and Kafka, what parallelism can and cannot do, and which remedy pays.

One package, above the chapters' figures in the layers (``pyproject.toml``'s import-linter
contract): it reads the engine's routing (:mod:`skewlab.engine.partitioners`,
:mod:`skewlab.engine.skew`, :mod:`skewlab.engine.routing`, which operators and strategies use
too), runs the strategies to price its remedies, and draws with :mod:`skewlab.viz`'s palette;
nothing below it imports it.

====================  ===============================================================
``options``           :class:`DoctorOptions`: every option with its default, check and help
                      once; ``skewlab doctor``'s flags are built from it
``diagnosis``         :func:`diagnose`: hot keys, loads per engine, the parallelism sweep, the
                      remedies priced (chapter 09's measurement; ``skewlab doctor``)
``schema``            :class:`Diagnosis`, what ``diagnose`` returns, typed; its JSON with a
                      schema version, read back by ``Diagnosis.from_json``
``subtask_replay``    each subtask's records and state accesses under a remedy, replayed on
                      the records' counts (no job runs)
``catalog``           the remedies weighed, one :class:`~skewlab.doctor.catalog.Remedy` record
                      each (strategy, pricing, state accesses, memory, costs, when it applies)
``remedies``          :func:`predict_remedies`: each remedy's job throughput predicted from a
                      replay and a cost profile
``remedy_costs``      ``skewlab bench remedy_costs``: the cost profile, each remedy's job time
                      per record measured by slope
``remedy_check``      ``skewlab bench remedy_check``: the predictions held against real runs
``planning``          key groups per subtask, the P that split a max parallelism evenly, the
                      max parallelism for a planned range of P
``verdict``           the verdict the text opens on, within 100 columns
``redaction``         :func:`redact`: every key as a stable hash, in every output
``checkpoint_state``  :func:`read_state`: the state's skew in a Structured Streaming
                      checkpoint, read with Spark's state data sources (``skewlab doctor
                      --state``)
``live_hot_keys``     :func:`follow`: the hot keys of a stream of arriving files, per window
                      and over the run, with their age (``skewlab doctor --follow``)
``state_and_follow``  ``skewlab bench state_and_follow``: notebook 09's checkpoint state and
                      live follow over one set of records, as sections a quick report shows
                      from the shipped reference
``spark_connect``     the doctor's Spark: embedded, or a remote one through Spark Connect
                      (``--remote sc://HOST:PORT``, ``$SPARK_REMOTE``)
``viz``               the doctor's text, figures, HTML page and notebook 09's controls
====================  ===============================================================

Example::

    >>> from skewlab import doctor
    >>> doctor.DEFAULT_PARALLELISM
    (2, 4, 8)
    >>> report = doctor.diagnose(views, key="tweet_id")                 # doctest: +SKIP
    >>> state = doctor.read_state("/tmp/query/checkpoint")              # doctest: +SKIP
    >>> doctor.follow("incoming/", key="page", window_seconds=5)        # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from types import ModuleType

from skewlab.doctor.catalog import CATALOG, Remedy
from skewlab.doctor.checkpoint_state import StateReport, read_state
from skewlab.doctor.diagnosis import (
    DEFAULT_PARALLELISM,
    FORMATS,
    diagnose,
    read_records,
    sample_records,
)
from skewlab.doctor.live_hot_keys import follow
from skewlab.doctor.options import DoctorOptions
from skewlab.doctor.redaction import redact
from skewlab.doctor.remedies import predict_remedies
from skewlab.doctor.schema import Diagnosis

__all__ = [
    "CATALOG",
    "DEFAULT_PARALLELISM",
    "FORMATS",
    "Diagnosis",
    "DoctorOptions",
    "Remedy",
    "StateReport",
    "diagnose",
    "follow",
    "predict_remedies",
    "read_records",
    "read_state",
    "redact",
    "remedy_check",
    "remedy_costs",
    "sample_records",
    "subtask_replay",
    "viz",
]

#: submodules loaded when first named (``doctor.viz`` brings plotly and ipywidgets, which the
#: command line's ``--help`` does not need)
_LAZY = ("remedy_check", "remedy_costs", "subtask_replay", "viz")


def __getattr__(name: str) -> ModuleType:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
