"""Small matrices: single-threaded BLAS (threads only add contention on a shared 2-core machine)."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="session")
def _single_thread_blas():
    with threadpool_limits(1):
        yield
