"""The compiled kernels, waited for: a test of the compiled path must not pass on the numpy path
because the background compile (clear_rag.index.compiled) had not finished yet."""

from __future__ import annotations

import pytest

from clear_rag.index import compiled

# A bound on the wait, only reached if the warm-up is stuck: it settles (ready or failed) by itself,
# after at most compiled.TIMEOUT_S for the compile and a load of a second or so.
SETTLE_S = compiled.TIMEOUT_S + 300


@pytest.fixture(scope="session")
def compiled_kernels() -> compiled.Kernels:
    """This process's compiled kernels, ready: the warm-up started if need be and waited on."""
    pytest.importorskip("numba", reason="the compiled kernels need numba")
    settled = compiled.wait(SETTLE_S)
    found = compiled.kernels()
    if settled.state != "ready" or found is None:
        pytest.fail(f"the compiled kernels did not become ready: {settled}")
    return found
