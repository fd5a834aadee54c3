"""The papermill engine a report executes its notebooks with: nbclient's, writing the executed
notebook once, when it ends.

papermill's own manager writes the whole notebook after every cell starts and ends; a lab
notebook carries its charts inline (megabytes of plotly JSON), so those writes cost a report
about a second per notebook for a file nobody reads before the notebook ends. This engine keeps
the one write papermill makes when the notebook ends, failed or not (``notebook_complete``), so
a failing notebook is still rendered up to its failing cell.

Example::

    >>> import papermill as pm
    >>> ENGINE in pm.engines.papermill_engines._engines
    True
"""

from __future__ import annotations

import sys

# papermill is imported with ``rfc3987_syntax`` kept from loading: jsonschema (through nbformat)
# compiles that optional package's Lark grammars at its import when it is installed
# (jupyter-events' ``jsonschema[format-nongpl]`` brings it), a large part of a report's start
# (docs/report.md measures it), for the ``iri`` format checks that no notebook schema asks for.
# Anything imported later can still import ``rfc3987_syntax`` itself.
_blocked = "jsonschema" not in sys.modules and "rfc3987_syntax" not in sys.modules
if _blocked:
    sys.modules["rfc3987_syntax"] = None  # an ImportError, which jsonschema suppresses
try:
    from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines
finally:
    if _blocked:
        del sys.modules["rfc3987_syntax"]
    del _blocked

__all__ = ["ENGINE", "SaveAtEndEngine"]

#: The engine's name for ``papermill.execute_notebook(..., engine_name=ENGINE)``.
ENGINE = "skewlab-save-at-end"


class _SaveAtEnd(NotebookExecutionManager):
    """papermill's execution manager, writing the notebook only when it completes."""

    _complete = False

    def save(self, **kwargs):
        if self._complete:
            super().save(**kwargs)

    def notebook_complete(self, **kwargs):
        self._complete = True
        super().notebook_complete(**kwargs)


class SaveAtEndEngine(NBClientEngine):
    """nbclient's engine with :class:`_SaveAtEnd` as its execution manager."""

    @classmethod
    def execute_notebook(
        cls,
        nb,
        kernel_name,
        output_path=None,
        progress_bar=True,
        log_output=False,
        autosave_cell_every=30,
        **kwargs,
    ):
        nb_man = _SaveAtEnd(
            nb,
            output_path=output_path,
            progress_bar=progress_bar,
            log_output=log_output,
            autosave_cell_every=autosave_cell_every,
        )
        nb_man.notebook_start()
        try:
            cls.execute_managed_notebook(nb_man, kernel_name, log_output=log_output, **kwargs)
        finally:
            nb_man.cleanup_pbar()
            nb_man.notebook_complete()
        return nb_man.nb


papermill_engines.register(ENGINE, SaveAtEndEngine)
