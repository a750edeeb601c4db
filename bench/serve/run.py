"""Run the server: in the foreground for `worldtrace serve`, or in a background thread on a free
127.0.0.1 port for tests, benchmarks and bench runs that evaluate a local model over HTTP."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch
import uvicorn
from fastapi import FastAPI

from bench.local_model import LocalChatModel
from bench.serve.app import create_app
from bench.serve.batcher import GenerationWorker


@dataclass(frozen=True)
class ServeConfig:
    """What `worldtrace serve` takes; model_id defaults to the folder's name."""

    model_dir: Path
    host: str = "127.0.0.1"
    port: int = 8000
    model_id: str | None = None
    max_batch: int = 8
    default_max_tokens: int = 512
    dtype: str = "auto"
    device: str | None = None
    threads: int | None = None  # torch intra-op threads on CPU (None: torch's default)


@contextmanager
def model_app(config: ServeConfig) -> Iterator[FastAPI]:
    """Load the model, start its generation worker, yield the app; stop the worker after."""
    model = LocalChatModel.load(config.model_dir, dtype=config.dtype, device=config.device)
    worker = GenerationWorker(model, max_batch=config.max_batch)
    try:
        yield create_app(worker, config.model_id or model.name, config.default_max_tokens)
    finally:
        worker.close()


def serve(config: ServeConfig) -> None:
    """Serve until interrupted (Ctrl-C)."""
    if config.threads:
        torch.set_num_threads(config.threads)
    with model_app(config) as app:
        uvicorn.run(app, host=config.host, port=config.port, log_level="info")


@contextmanager
def serve_in_background(app: FastAPI, host: str = "127.0.0.1", startup_timeout_s: float = 30.0
                        ) -> Iterator[str]:
    """Serve `app` from a thread on a free port; yields the base URL ("http://host:port/v1")."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the server on {host} did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()
