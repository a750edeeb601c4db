"""`worldtrace serve` on 127.0.0.1 over a tiny model folder, spoken to by the official client."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest

from bench.serve.run import ServeConfig, model_app, serve_in_background
from tests.tiny_lm import tiny_model_dir, torch_one_thread  # noqa: F401  (fixtures)

pytestmark = pytest.mark.usefixtures("torch_one_thread")

MESSAGES = [{"role": "system", "content": "You simulate a Linux shell."},
            {"role": "user", "content": "### Turn 1\n**Action:**\nls -la"}]


@pytest.fixture(scope="module")
def base_url(tiny_model_dir):  # noqa: F811
    with model_app(ServeConfig(tiny_model_dir, default_max_tokens=24, dtype="float32")) as app, \
            serve_in_background(app) as url:
        yield url


@pytest.fixture(scope="module")
def client(base_url) -> openai.OpenAI:
    return openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)


def chat(client: openai.OpenAI, **kwargs):
    return client.chat.completions.create(model="tiny_lm", messages=MESSAGES, **kwargs)


def test_models_lists_the_folder_name(client):
    assert [m.id for m in client.models.list().data] == ["tiny_lm"]


def test_greedy_completion_has_choices_and_usage(client):
    response = chat(client, temperature=0, max_tokens=12, n=2)
    assert response.object == "chat.completion"
    assert len(response.choices) == 2
    assert response.choices[0].message.content == response.choices[1].message.content
    assert response.choices[0].message.content  # a random model still says something
    assert {c.finish_reason for c in response.choices} <= {"stop", "length"}
    assert response.usage.prompt_tokens > 5
    assert 2 <= response.usage.completion_tokens <= 24
    assert response.usage.total_tokens == response.usage.prompt_tokens + \
        response.usage.completion_tokens


def test_max_tokens_ends_with_length(client):
    response = chat(client, temperature=0, max_tokens=3)
    choice = response.choices[0]
    if choice.finish_reason == "length":
        assert response.usage.completion_tokens == 3
    else:  # the model ended on its own within three tokens
        assert response.usage.completion_tokens <= 3


def test_seed_makes_sampling_reproducible(client):
    first = chat(client, temperature=1.0, top_p=0.9, seed=7, max_tokens=16)
    again = chat(client, temperature=1.0, top_p=0.9, seed=7, max_tokens=16)
    assert first.choices[0].message.content == again.choices[0].message.content


def test_stream_matches_the_plain_reply(client):
    plain = chat(client, temperature=0, max_tokens=16).choices[0].message.content
    chunks = list(chat(client, temperature=0, max_tokens=16, stream=True,
                       stream_options={"include_usage": True}))
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain
    finished = [c.choices[0].finish_reason for c in chunks if c.choices and
                c.choices[0].finish_reason]
    assert finished in (["stop"], ["length"])
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens >= 1


def test_a_stream_of_several_choices_indexes_each(client):
    plain = chat(client, temperature=0, max_tokens=10).choices[0].message.content
    chunks = list(chat(client, temperature=0, max_tokens=10, n=2, stream=True))
    texts = {index: "".join(c.choices[0].delta.content or "" for c in chunks
                            if c.choices and c.choices[0].index == index) for index in (0, 1)}
    assert texts == {0: plain, 1: plain}
    finished = [c.choices[0].index for c in chunks if c.choices and c.choices[0].finish_reason]
    assert sorted(finished) == [0, 1]


@pytest.mark.parametrize("stream", [False, True])
def test_stop_string_cuts_before_it(client, stream):
    plain = chat(client, temperature=0, max_tokens=24).choices[0].message.content
    assert len(plain) >= 4, plain
    stop = plain[2:4]
    expected = plain[: plain.find(stop)]
    if stream:
        chunks = chat(client, temperature=0, max_tokens=24, stop=[stop], stream=True)
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        reply = chat(client, temperature=0, max_tokens=24, stop=stop).choices[0]
        assert reply.finish_reason == "stop"
        text = reply.message.content
    assert text == expected


def test_concurrent_requests_all_answered_alike(client, base_url):
    expected = chat(client, temperature=0, max_tokens=12).choices[0].message.content
    with ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(lambda _: chat(client, temperature=0, max_tokens=12), range(4)))
    assert [r.choices[0].message.content for r in replies] == [expected] * 4
    stats = httpx.get(base_url.removesuffix("/v1") + "/health").json()["worker"]
    assert stats["failures"] == 0 and stats["requests"] >= 5


def test_unknown_model_is_404(client):
    with pytest.raises(openai.NotFoundError, match="not served here"):
        client.chat.completions.create(model="gpt-4", messages=MESSAGES)


def test_invalid_settings_are_400(client):
    with pytest.raises(openai.BadRequestError):
        chat(client, temperature=5)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="tiny_lm", messages=[])


def test_prompt_beyond_the_context_is_400(client):
    long_messages = [{"role": "user", "content": "ls -la notes.txt " * 2000}]
    with pytest.raises(openai.BadRequestError, match="context"):
        client.chat.completions.create(model="tiny_lm", messages=long_messages)


def test_a_client_leaving_mid_stream_frees_the_model(client, base_url):
    def worker() -> dict:
        return httpx.get(base_url.removesuffix("/v1") + "/health").json()["worker"]

    cancelled = worker()["cancelled_streams"]
    stream = chat(client, temperature=1.0, max_tokens=8000, stream=True)
    next(iter(stream))
    stream.close()  # hang up after the first chunk
    assert chat(client, temperature=0, max_tokens=4).choices[0].message.content is not None
    deadline = time.monotonic() + 10
    while worker()["cancelled_streams"] == cancelled and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker()["cancelled_streams"] == cancelled + 1 and worker()["failures"] == 0
