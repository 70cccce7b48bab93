"""
Concurrent requests parsed together: `RequestBatcher` collects the sentences of the requests
that arrive within a short window (or while the previous batch is being parsed) into one batch
of at most `max_batch` sentences, parses it in one call on a worker thread, and hands each
request its own results.

Why: a neural parser's cost per batch grows far more slowly than its number of sentences (one
pass through the encoder, one call of the decoder per batch), so under load one batch of 16
sentences answers 16 waiting clients much sooner than 16 calls one after the other. Parsing
runs on a single worker thread, so the model is never used by two threads at once and the
event loop stays free to accept requests while a batch is parsed.

With `max_batch_requests=1` every request is parsed on its own, one after the other: the
unbatched server that `benchmarks/serve_load.py` compares against.
"""
import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, List, Optional, Tuple

Job = Tuple[List[Any], "asyncio.Future[List[Any]]"]


class RequestBatcher:
    """
    Batches the items (sentences) of concurrent requests for one function that takes a list of
    items and returns one result per item, in order.

    # Parameters

    parse : `Callable[[List[Any]], List[Any]]`
        Called on the worker thread with the items of every request in the batch, in the order
        the requests arrived.
    max_batch : `int`, optional (default = `32`)
        At most this many items per call: the batch is closed when it is reached. A request
        with more items than this is parsed alone, in one call.
    window : `float`, optional (default = `0.005`)
        Seconds the first request of a batch waits for others to join it, while the server is
        busy (the last batch held more than one request). Requests that arrive while a batch is
        being parsed join the next batch without waiting at all. A lone client's requests never
        wait: with one request at a time, a window would only add its length to every answer.
    max_batch_requests : `Optional[int]`, optional (default = `None`)
        At most this many requests per call (`None`: no limit besides `max_batch`); 1 turns
        batching off.
    """

    def __init__(
        self,
        parse: Callable[[List[Any]], List[Any]],
        max_batch: int = 32,
        window: float = 0.005,
        max_batch_requests: Optional[int] = None,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        if window < 0:
            raise ValueError(f"window must be at least 0 seconds, got {window}")
        if max_batch_requests is not None and max_batch_requests < 1:
            raise ValueError(f"max_batch_requests must be at least 1, got {max_batch_requests}")
        self.parse = parse
        self.max_batch = max_batch
        self.window = window
        self.max_batch_requests = max_batch_requests
        self.batches = 0  # calls of `parse` so far
        self.items = 0  # items parsed so far
        self._queue: Optional["asyncio.Queue[Job]"] = None
        self._task: Optional["asyncio.Task[None]"] = None
        self._executor: Optional[ThreadPoolExecutor] = None
        # A request taken from the queue that did not fit into the last batch: the next one's
        # first.
        self._carried: Optional[Job] = None
        self._in_flight: List[Job] = []  # the batch being parsed
        self._last_batch_requests = 0

    @property
    def waiting(self) -> int:
        """Requests queued and not yet in a batch."""
        queued = 0 if self._queue is None else self._queue.qsize()
        return queued + (self._carried is not None)

    def start(self) -> None:
        """Starts the collecting task on the running event loop (and the worker thread)."""
        if self._task is not None:
            raise RuntimeError("the batcher is already running")
        self._queue = asyncio.Queue()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lal-parse")
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stops collecting; requests still queued get a `RuntimeError`."""
        if self._task is None:
            return
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        assert self._queue is not None and self._executor is not None
        left = [self._queue.get_nowait() for _ in range(self._queue.qsize())] + self._in_flight
        if self._carried is not None:
            left.append(self._carried)
        for _, future in left:
            if not future.done():
                future.set_exception(RuntimeError("the server is shutting down"))
        # Waits for the batch being parsed, without blocking the event loop meanwhile.
        await asyncio.get_running_loop().run_in_executor(None, self._executor.shutdown)
        self._task = self._queue = self._executor = self._carried = None

    async def submit(self, items: List[Any]) -> List[Any]:
        """The results of `items`, parsed in a batch with those of other requests."""
        if self._queue is None:
            raise RuntimeError("the batcher is not running: call start() first")
        if not items:
            return []
        future: "asyncio.Future[List[Any]]" = asyncio.get_running_loop().create_future()
        await self._queue.put((list(items), future))
        return await future

    def _full(self, jobs: List[Job], size: int) -> bool:
        if self.max_batch_requests is not None and len(jobs) >= self.max_batch_requests:
            return True
        return size >= self.max_batch

    async def _collect(self) -> List[Job]:
        """The requests of the next batch: the first to come, then those that join it within
        the window (at once if already queued), until the batch is full."""
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        if self._carried is not None:
            jobs, self._carried = [self._carried], None
        else:
            jobs = [await self._queue.get()]
        size = len(jobs[0][0])
        busy = self._last_batch_requests > 1
        deadline = loop.time() + (self.window if busy else 0.0)
        while not self._full(jobs, size):
            if not self._queue.empty():
                job = self._queue.get_nowait()
            else:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    job = await asyncio.wait_for(self._queue.get(), remaining)
                except asyncio.TimeoutError:
                    break
            if size + len(job[0]) > self.max_batch:
                # It would overflow the batch: it opens the next one instead, first in line.
                self._carried = job
                break
            jobs.append(job)
            size += len(job[0])
        return jobs

    async def _run(self) -> None:
        assert self._executor is not None
        loop = asyncio.get_running_loop()
        while True:
            jobs = await self._collect()
            # Clients that gave up (a closed connection cancels its request) are not parsed.
            jobs = [job for job in jobs if not job[1].done()]
            if not jobs:
                continue
            items = [item for job_items, _ in jobs for item in job_items]
            self._in_flight = jobs
            self._last_batch_requests = len(jobs)
            try:
                results = await loop.run_in_executor(self._executor, self.parse, items)
                if len(results) != len(items):
                    raise RuntimeError(f"{len(results)} results for {len(items)} items")
            except Exception as error:  # every request of the batch learns why
                self._in_flight = []
                for _, future in jobs:
                    if not future.done():
                        future.set_exception(error)
                continue
            self._in_flight = []
            self.batches += 1
            self.items += len(items)
            start = 0
            for job_items, future in jobs:
                if not future.done():
                    future.set_result(results[start : start + len(job_items)])
                start += len(job_items)
