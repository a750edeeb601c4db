"""`worldtrace serve` as a user runs it: a subprocess on a free 127.0.0.1 port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import openai
import pytest

from tests.conftest import REPO_ROOT
from tests.tiny_lm import tiny_model_dir, torch_one_thread  # noqa: F401  (fixtures)
from worldtrace.cli import main

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_worldtrace_serve_answers_the_official_client(tiny_model_dir):  # noqa: F811
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "worldtrace", "serve", "--model", str(tiny_model_dir),
         "--port", str(port), "--max-tokens", "8", "--threads", "1"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused",
                           max_retries=0, timeout=10)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                models = client.models.list()
                break
            except openai.APIConnectionError:
                assert server.poll() is None, server.stdout.read()
                assert time.monotonic() < deadline, "worldtrace serve did not come up"
                time.sleep(0.5)
        assert [m.id for m in models.data] == ["tiny_lm"]
        reply = client.chat.completions.create(
            model="tiny_lm", messages=[{"role": "user", "content": "ls"}], temperature=0)
        assert reply.usage.completion_tokens <= 8
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_missing_model_folder_is_a_one_line_error(tmp_path, capsys):
    assert main(["serve", "--model", str(tmp_path / "nope")]) == 2
    assert "no such model folder" in capsys.readouterr().err
