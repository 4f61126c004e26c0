"""A call handed to a bounded pool runs in the thread that waits for it when no worker is
free (:mod:`daemon.pool_call`)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import pytest

from daemon.pool_call import PoolCall


def test_a_worker_waiting_for_a_call_queued_behind_it_runs_it_itself() -> None:
    # a pool.submit here would wait for good: the only worker is the one waiting
    with ThreadPoolExecutor(max_workers=1) as pool:
        outer = pool.submit(lambda: PoolCall(pool, lambda: 6 * 7).result())
        assert outer.result(timeout=5) == 42


def test_the_call_runs_once_and_every_waiter_gets_its_result() -> None:
    runs: list[int] = []
    started, release = threading.Event(), threading.Event()

    def slow() -> str:
        runs.append(1)
        started.set()
        release.wait(5)
        return "done"

    with ThreadPoolExecutor(max_workers=2) as pool:
        call = PoolCall(pool, slow)
        assert started.wait(5)  # a worker took it
        with pytest.raises(FutureTimeout):
            call.result(timeout=0.05)  # a bounded wait only waits
        waiters = [pool.submit(call.result, 5) for _ in range(1)]
        release.set()
        assert call.result(timeout=5) == "done"
        assert [w.result(timeout=5) for w in waiters] == ["done"]
    assert runs == [1] and call.done()


def test_a_bounded_wait_never_runs_the_call_itself() -> None:
    held = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(held.wait, 5)
        call = PoolCall(pool, lambda: "late")
        with pytest.raises(FutureTimeout):
            call.result(timeout=0.05)
        held.set()
        assert call.result(timeout=5) == "late"  # run by the worker once free


def test_what_the_call_raises_reaches_the_waiter() -> None:
    held = threading.Event()
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(held.wait, 5)  # the only worker is busy: the waiter runs the call

        def fails() -> None:
            raise ValueError("bad query")

        call = PoolCall(pool, fails)
        with pytest.raises(ValueError, match="bad query"):
            call.result()
        held.set()
