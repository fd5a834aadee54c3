"""The one server error the notebook tests let through: jupyter_server's 500 on listing the
kernels while one is starting, recognised from the server's own log, request by request."""

from __future__ import annotations

from pathlib import Path

from .lab import kernel_list_races, unexplained_errors

RACE = """\
[E 2026-11-28 11:16:47.980 ServerApp] Uncaught exception GET /api/kernels?1795 (127.0.0.1)
    traitlets.traitlets.TraitError: The 'last_activity' trait of a ServerKernelManager \
instance expected a datetime, not the NoneType None.
[E 2026-11-28 11:16:47.982 ServerApp] 500 GET /api/kernels?1795 (abc@127.0.0.1) 5.29ms
"""
OTHER = """\
[E 2026-11-28 11:17:01.000 ServerApp] Uncaught exception GET /api/kernels?1800 (127.0.0.1)
    KeyError: 'something else'
[E 2026-11-28 11:17:01.002 ServerApp] 500 GET /api/kernels?1800 (abc@127.0.0.1) 3.10ms
"""
FAILED = "console error: Failed to load resource: the server responded with a status of 500 "


def test_only_the_kernel_list_race_is_let_through_and_only_for_its_own_request():
    log = RACE + OTHER
    assert kernel_list_races(log) == {"/api/kernels?1795"}
    race = f"{FAILED}(Internal Server Error) [http://127.0.0.1:8888/api/kernels?1795]"
    other = f"{FAILED}(Internal Server Error) [http://127.0.0.1:8888/api/kernels?1800]"
    page = "page error: TypeError: x is undefined"
    assert unexplained_errors([race, other, page], kernel_list_races(log)) == [other, page]


def test_the_race_as_a_real_server_logged_it_is_recognised():
    log = Path(__file__).with_name("fixtures") / "lab_kernel_list_race.log"
    assert kernel_list_races(log.read_text()) == {"/api/kernels?1795864607972"}
