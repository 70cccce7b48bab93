"""`RequestBatcher` with a recording parse function: which items are parsed together, and
that every request gets exactly its own results, whatever happens to the others.

The requests of a test are submitted with `asyncio.gather` before the batcher's task runs, so
they are all queued when it collects a batch: which batches form does not depend on timing.
"""
import asyncio
import threading
from typing import Any, List

import pytest

from lal_allennlp.serving.batching import RequestBatcher


class Recorder:
    """A parse function that records each call's items and answers item -> item * 10."""

    def __init__(self, fail_on: Any = None) -> None:
        self.calls: List[List[Any]] = []
        self.threads: List[str] = []
        self.fail_on = fail_on

    def __call__(self, items: List[Any]) -> List[Any]:
        self.calls.append(list(items))
        self.threads.append(threading.current_thread().name)
        if self.fail_on is not None and self.fail_on in items:
            raise RuntimeError(f"cannot parse {self.fail_on}")
        return [item * 10 for item in items]


def run(coroutine):
    return asyncio.run(coroutine)


async def _serve(batcher: RequestBatcher, requests: List[List[int]]) -> List[Any]:
    batcher.start()
    try:
        return await asyncio.gather(
            *(batcher.submit(items) for items in requests), return_exceptions=True
        )
    finally:
        await batcher.stop()


def test_queued_requests_share_one_call_and_get_their_own_results():
    parse = Recorder()
    requests = [[1], [2, 3], [4], [5, 6, 7]]
    results = run(_serve(RequestBatcher(parse, max_batch=32, window=0.0), requests))
    assert results == [[10], [20, 30], [40], [50, 60, 70]]
    assert parse.calls == [[1, 2, 3, 4, 5, 6, 7]]
    assert parse.threads == ["lal-parse_0"]  # on the worker thread, not the event loop's


def test_batches_never_pass_max_batch_and_never_split_a_request():
    parse = Recorder()
    requests = [[1, 2], [3, 4], [5, 6], [7], [8, 9]]
    results = run(_serve(RequestBatcher(parse, max_batch=4, window=0.0), requests))
    assert results == [[10, 20], [30, 40], [50, 60], [70], [80, 90]]
    # [5, 6] + [7] fit, [8, 9] would make 5: it opens the next batch.
    assert parse.calls == [[1, 2, 3, 4], [5, 6, 7], [8, 9]]


def test_a_request_larger_than_max_batch_is_parsed_alone():
    parse = Recorder()
    results = run(_serve(RequestBatcher(parse, max_batch=2, window=0.0), [[1], [2, 3, 4], [5]]))
    assert results == [[10], [20, 30, 40], [50]]
    assert parse.calls == [[1], [2, 3, 4], [5]]


def test_without_batching_each_request_is_one_call():
    parse = Recorder()
    batcher = RequestBatcher(parse, max_batch=32, window=0.0, max_batch_requests=1)
    results = run(_serve(batcher, [[1], [2, 3], [4]]))
    assert results == [[10], [20, 30], [40]]
    assert parse.calls == [[1], [2, 3], [4]]
    assert (batcher.batches, batcher.items) == (3, 4)


def test_a_busy_server_waits_the_window_for_late_requests():
    """Once a batch has held several requests, a request that comes 20 ms after the first of
    the next batch joins it when the window is long (10 s: the batch closes because it is full,
    not because the window ends)."""
    parse = Recorder()

    async def scenario():
        batcher = RequestBatcher(parse, max_batch=3, window=10.0)
        batcher.start()
        try:
            busy = await asyncio.gather(batcher.submit([7]), batcher.submit([8]))
            first = asyncio.ensure_future(batcher.submit([1, 2]))
            await asyncio.sleep(0.02)
            second = await batcher.submit([3])
            return busy, await first, second
        finally:
            await batcher.stop()

    assert run(scenario()) == ([[70], [80]], [10, 20], [30])
    assert parse.calls == [[7, 8], [1, 2, 3]]


def test_a_lone_client_never_waits_the_window():
    """One request at a time: each is parsed at once, not after the 60 s window (the 30 s
    limit here is only reached if it waits)."""
    parse = Recorder()

    async def scenario():
        batcher = RequestBatcher(parse, max_batch=32, window=60.0)
        batcher.start()
        try:
            return [await asyncio.wait_for(batcher.submit([k]), 30) for k in range(3)]
        finally:
            await batcher.stop()

    assert run(scenario()) == [[0], [10], [20]]
    assert parse.calls == [[0], [1], [2]]


def test_a_failing_batch_fails_its_requests_only_and_the_batcher_goes_on():
    parse = Recorder(fail_on=3)

    async def scenario():
        batcher = RequestBatcher(parse, max_batch=32, window=0.0)
        batcher.start()
        try:
            failed = await asyncio.gather(
                batcher.submit([1]), batcher.submit([3]), return_exceptions=True
            )
            later = await batcher.submit([4])
            return failed, later
        finally:
            await batcher.stop()

    failed, later = run(scenario())
    assert all(isinstance(result, RuntimeError) for result in failed)
    assert "cannot parse 3" in str(failed[0])
    assert later == [40]


def test_a_wrong_number_of_results_is_an_error_not_a_misalignment():
    async def scenario():
        batcher = RequestBatcher(lambda items: items[:-1], window=0.0)
        batcher.start()
        try:
            return await asyncio.gather(batcher.submit([1, 2]), return_exceptions=True)
        finally:
            await batcher.stop()

    (result,) = run(scenario())
    assert isinstance(result, RuntimeError) and "1 results for 2 items" in str(result)


def test_a_cancelled_request_is_not_parsed():
    parse = Recorder()

    async def scenario():
        batcher = RequestBatcher(parse, max_batch=32, window=0.0)
        batcher.start()
        try:
            given_up = asyncio.ensure_future(batcher.submit([1]))
            kept = asyncio.ensure_future(batcher.submit([2]))
            await asyncio.sleep(0)  # both are queued now
            given_up.cancel()
            return await kept
        finally:
            await batcher.stop()

    assert run(scenario()) == [20]
    assert parse.calls == [[2]]


def test_stop_fails_the_waiting_requests():
    started, release = threading.Event(), threading.Event()

    def slow(items):
        started.set()
        release.wait(5)
        return items

    async def scenario():
        batcher = RequestBatcher(slow, max_batch=1, window=0.0)
        batcher.start()
        busy = asyncio.ensure_future(batcher.submit([1]))
        waiting = asyncio.ensure_future(batcher.submit([2]))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        stopping = asyncio.ensure_future(batcher.stop())
        await asyncio.sleep(0.01)
        release.set()
        await stopping
        return await asyncio.gather(busy, waiting, return_exceptions=True)

    results = run(scenario())
    assert all(isinstance(result, RuntimeError) for result in results)
    assert "shutting down" in str(results[1])


def test_submit_before_start_and_bad_settings_are_refused():
    batcher = RequestBatcher(Recorder())
    with pytest.raises(RuntimeError, match="not running"):
        run(batcher.submit([1]))
    with pytest.raises(ValueError, match="max_batch"):
        RequestBatcher(Recorder(), max_batch=0)
    with pytest.raises(ValueError, match="window"):
        RequestBatcher(Recorder(), window=-1)
    with pytest.raises(ValueError, match="max_batch_requests"):
        RequestBatcher(Recorder(), max_batch_requests=0)
