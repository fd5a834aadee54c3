"""The papermill engine a report executes its notebooks with: nbclient's, writing the executed
notebook once, when it ends, through a kernel client that stays connected.

papermill's own manager writes the whole notebook after every cell starts and ends; a lab
notebook carries its charts inline (megabytes of plotly JSON), so those writes cost a report
about a second per notebook for a file nobody reads before the notebook ends. This engine keeps
the one write papermill makes when the notebook ends, failed or not (``notebook_complete``), so
a failing notebook is still rendered up to its failing cell.

Given ``kernel_client=`` (a connected asynchronous client of the kernel ``km=`` manages:
:meth:`~skewlab.report.kernel.SharedKernel.notebook_client`), the notebook runs through that
client instead of a new one. nbclient connects a new client per notebook and waits until it is
ready: jupyter_client asks the kernel for its info, waits up to 0.2 s for a first IOPub message
and, where none came yet (a new subscription), asks again; 0.22 s per notebook as measured, for a
report whose notebooks all run in one kernel.

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
    from papermill.clientwrap import PapermillNotebookClient
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


class _ConnectedClient(PapermillNotebookClient):
    """papermill's notebook client running through an already connected kernel client (nbclient
    connects one only when it has none; with ``km=`` given it leaves it connected at the end)."""

    def __init__(self, nb_man, kernel_client=None, **kwargs):
        super().__init__(nb_man, **kwargs)
        if kernel_client is not None:
            if kwargs.get("km") is None:
                raise ValueError("a kernel client needs the kernel manager it belongs to (km=)")
            self.kc = kernel_client


class SaveAtEndEngine(NBClientEngine):
    """nbclient's engine with :class:`_SaveAtEnd` as its execution manager, and a kernel client
    of the caller's when given one (``kernel_client=``)."""

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

    @classmethod
    def execute_managed_notebook(
        cls,
        nb_man,
        kernel_name,
        log_output=False,
        stdout_file=None,
        stderr_file=None,
        start_timeout=60,
        execution_timeout=None,
        kernel_client=None,
        **kwargs,
    ):
        """papermill's (:meth:`NBClientEngine.execute_managed_notebook`), through
        ``kernel_client`` when given."""
        from papermill.log import logger
        from papermill.utils import merge_kwargs, remove_args

        kwargs = remove_args(["input_path"], **kwargs)
        safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
        final_kwargs = merge_kwargs(
            safe_kwargs,
            timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
            startup_timeout=start_timeout,
            kernel_name=kernel_name,
            log=logger,
            log_output=log_output,
            stdout_file=stdout_file,
            stderr_file=stderr_file,
        )
        return _ConnectedClient(nb_man, kernel_client=kernel_client, **final_kwargs).execute()


papermill_engines.register(ENGINE, SaveAtEndEngine)
