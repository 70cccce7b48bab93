"""A real `lal-serve` process for the tests that talk to it over loopback: the browser test
and the command's own tests."""
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
import requests

LAL_SERVE = str(Path(sys.executable).parent / "lal-serve")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_health(url: str, process: subprocess.Popen, log: Path, timeout: float = 120.0):
    """Waits until `url/health` answers; fails with the server's log if it exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"lal-serve exited with {process.returncode}:\n{log.read_text()}")
        try:
            if requests.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.2)
    process.kill()
    pytest.fail(f"lal-serve did not answer within {timeout} s:\n{log.read_text()}")


@pytest.fixture(scope="module")
def served(fixture_archive, tmp_path_factory) -> Iterator[str]:
    """The URL of a `lal-serve` process on 127.0.0.1 serving the tiny label attention parser
    (or the archive named by the environment variable LAL_SERVE_TEST_MODEL, e.g. to take the
    screenshot of docs/ with a trained model)."""
    archive = os.environ.get("LAL_SERVE_TEST_MODEL") or fixture_archive("lal_parser")
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "lal-serve.log"
    with open(log, "w") as output:
        process = subprocess.Popen(
            [LAL_SERVE, archive, "--port", str(port), "--max-words", "60", "--log-level", "info"],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()

