"""hf_local and openai_compatible on a tiny model folder; openai_compatible against a real
`worldtrace serve` on 127.0.0.1, and against a real endpoint that fails on purpose (retries)."""

from __future__ import annotations

import json
import shutil

import httpx
import pytest

from bench.endpoint import EndpointConfig
from bench.official import chat_messages
from bench.predictors.base import PredictorContext, build_predictor
from bench.predictors.hf_local import HfLocalConfig, HfLocalPredictor
from bench.predictors.openai_compatible import (
    OpenAICompatibleConfig,
    OpenAICompatiblePredictor,
    PredictionFailures,
)
from bench.sample import BenchSample
from bench.serve.run import ServeConfig, model_app, serve_in_background
from tests.scripted_endpoint import scripted_endpoint
from tests.tiny_lm import tiny_model_dir, torch_one_thread  # noqa: F401  (fixtures)

pytestmark = pytest.mark.usefixtures("torch_one_thread")

MAX_TOKENS = 12


def terminal_sample(number: int, history_turns: int = 2) -> BenchSample:
    history = [(f"ls dir{number}_{t}", f"file{t}.txt\nnotes.txt") for t in range(history_turns)]
    return BenchSample(domain="terminal", id=f"terminal-{number}", history=history,
                       current_action=f"cat notes{number}.txt", reference="hello world",
                       system_prompt="You simulate a Linux shell.", turn_idx=history_turns + 1,
                       total_turns=history_turns + 3, trajectory_id=f"t{number}", source="test")


SAMPLES = [terminal_sample(n, history_turns=n % 3) for n in range(5)]


@pytest.fixture(scope="module")
def served(tiny_model_dir):  # noqa: F811
    """(base URL, a function counting the generation requests the server has answered)."""
    with model_app(ServeConfig(tiny_model_dir, dtype="float32")) as app, \
            serve_in_background(app) as url:
        health = url.removesuffix("/v1") + "/health"

        def answered() -> int:
            stats = httpx.get(health).json()["worker"]
            return stats["requests"] + stats["streams"]

        yield url, answered


def remote(url: str, cache_dir=None, concurrency: int = 1, **endpoint) -> OpenAICompatiblePredictor:
    config = EndpointConfig(url, concurrency=concurrency, **endpoint)
    return OpenAICompatiblePredictor(OpenAICompatibleConfig(
        config, temperature=0.0, max_tokens=MAX_TOKENS, cache_dir=cache_dir))


def test_hf_local_predicts_every_sample_in_order(tiny_model_dir):  # noqa: F811
    predictor = HfLocalPredictor(HfLocalConfig(tiny_model_dir, batch_size=2,
                                               max_new_tokens=MAX_TOKENS, dtype="float32"))
    outputs = predictor.predict(SAMPLES)
    assert len(outputs) == len(SAMPLES) and all(isinstance(o, str) for o in outputs)
    assert predictor.stats.batches == 3 and predictor.stats.completion_tokens > 0
    one_by_one = HfLocalPredictor(HfLocalConfig(tiny_model_dir, batch_size=1,
                                                max_new_tokens=MAX_TOKENS),
                                  model=predictor.model)
    assert [one_by_one.predict([s])[0] for s in SAMPLES[:2]] == outputs[:2]


def test_hf_local_fails_a_prompt_over_the_context_and_fits_one_under_a_budget(tiny_model_dir):  # noqa: F811
    long = terminal_sample(9, history_turns=250)
    official = build_predictor(f"hf_local:{tiny_model_dir}",
                               PredictorContext(max_new_tokens=MAX_TOKENS))
    assert official.name == "hf_local:tiny_lm"
    assert official.predict([long, SAMPLES[1]])[0] == ""  # sent whole: over the context
    assert list(official.failures) == [long.id] and "leaves no room" in official.failures[long.id]
    assert official.stats.trimmed_samples == 0 and official.stats.failed_samples == 1
    budgeted = build_predictor(f"hf_local:{tiny_model_dir}",
                               PredictorContext(max_new_tokens=MAX_TOKENS, max_prompt_tokens=600))
    assert len(budgeted.predict([long])) == 1 and budgeted.failures == {}
    assert budgeted.stats.trimmed_samples == 1 and 0 < budgeted.stats.dropped_turns < 250


def test_hf_local_under_a_budget_cuts_or_fails_per_sample(tiny_model_dir):  # noqa: F811
    screen = "".join(f"[{k}] button 'Item {k}' clickable\n" for k in range(3000))
    too_long_screen = BenchSample(
        domain="web", id="web-long", history=[], current_action="click [7]",
        reference=screen, system_prompt="You simulate a browser.", turn_idx=1, total_turns=2,
        trajectory_id="w1", source="test", task="Open item 7", initial_state=screen)
    too_long_system = terminal_sample(3, history_turns=1)
    too_long_system = BenchSample(**{**vars(too_long_system), "id": "terminal-sys",
                                     "system_prompt": "You simulate a shell. " * 6000})
    predictor = HfLocalPredictor(HfLocalConfig(tiny_model_dir, batch_size=2,
                                               max_new_tokens=MAX_TOKENS, dtype="float32",
                                               max_prompt_tokens=4096))
    assert predictor.model.prompt_tokens(chat_messages(too_long_screen)) > 8192
    outputs = predictor.predict([too_long_screen, SAMPLES[1], too_long_system])
    assert len(outputs) == 3 and outputs[2] == ""  # not generated: a failed sample
    assert list(predictor.failures) == ["terminal-sys"]
    assert predictor.stats.cut_samples == 1 and predictor.stats.failed_samples == 1
    assert outputs[1] == HfLocalPredictor(HfLocalConfig(tiny_model_dir, max_new_tokens=MAX_TOKENS),
                                          model=predictor.model).predict([SAMPLES[1]])[0]
    kept, reason = predictor._fit(chat_messages(too_long_screen))
    assert reason == "" and kept[0]["content"] == "You simulate a browser."
    assert kept[-1]["content"].endswith("**Action:**\nclick [7]")
    assert len(kept[-1]["content"]) < len(chat_messages(too_long_screen)[-1]["content"])


def test_hf_local_keeps_prompts_under_its_prompt_budget(tiny_model_dir):  # noqa: F811
    predictor = HfLocalPredictor(HfLocalConfig(tiny_model_dir, max_new_tokens=MAX_TOKENS,
                                               max_prompt_tokens=200))
    long = terminal_sample(8, history_turns=30)
    fitted, _ = predictor._fit(chat_messages(long))
    assert predictor.model.prompt_tokens(fitted) <= 200 < predictor.model.prompt_tokens(
        chat_messages(long))
    assert fitted[-1] == chat_messages(long)[-1] and predictor.stats.trimmed_samples == 1


def test_openai_compatible_against_serve_matches_hf_local(served, tiny_model_dir, tmp_path):  # noqa: F811
    url, _ = served
    predictor = remote(url, cache_dir=tmp_path)
    assert predictor.name == "openai_compatible:tiny_lm"
    local = HfLocalPredictor(HfLocalConfig(tiny_model_dir, batch_size=1,
                                           max_new_tokens=MAX_TOKENS, dtype="float32"))
    # One request at a time on the server = batch size 1 locally: the same greedy text.
    assert predictor.predict(SAMPLES) == local.predict(SAMPLES)
    assert predictor.endpoint.stats.completion_tokens > 0


def test_a_rerun_asks_nothing_again(served, tmp_path):
    url, answered = served
    first = remote(url, cache_dir=tmp_path, concurrency=3).predict(SAMPLES)
    before = answered()
    again = remote(url, cache_dir=tmp_path, concurrency=3)
    assert again.predict(SAMPLES) == first
    assert answered() == before
    assert again.stats.cached == len(SAMPLES) and again.stats.asked == 0
    changed = [*SAMPLES[:4], terminal_sample(4, history_turns=2)]  # same id, new prompt
    third = remote(url, cache_dir=tmp_path)
    third.predict(changed)
    assert answered() == before + 1 and third.stats.asked == 1


def test_a_prompt_over_the_context_fails_that_sample(served):
    url, _ = served
    predictor = remote(url)
    long = terminal_sample(7, history_turns=250)
    assert predictor.predict([long, SAMPLES[0]])[0] == ""  # sent whole, as officially
    assert list(predictor.failures) == [long.id] and predictor.stats.over_context == 1
    assert "context" in predictor.failures[long.id]


def echo_last_message(number: int, body: dict) -> str:
    return f"echo: {body['messages'][-1]['content']}"


def failing_endpoint(failures: int, always_failing: str = "\0"):
    """A real endpoint answering 503 to its first `failures` requests and always to prompts
    containing `always_failing`; the rest are echoed."""
    def reply(number: int, body: dict) -> str | None:
        prompt = body["messages"][-1]["content"]
        return None if number <= failures or always_failing in prompt else \
            echo_last_message(number, body)

    return scripted_endpoint(reply, model="flaky")


def test_failed_requests_are_retried_with_backoff():
    app, seen = failing_endpoint(failures=3)
    with serve_in_background(app) as url:
        predictor = remote(url, max_retries=3, backoff_s=0.01)
        outputs = predictor.predict(SAMPLES[:2])
    assert outputs[0].startswith("echo: ") and "cat notes0.txt" in outputs[0]
    assert predictor.endpoint.stats.retries == 3
    assert len(seen) == 2 + 3


def test_samples_failing_for_good_are_reported_and_the_rest_resume(tmp_path):
    app, seen = failing_endpoint(failures=0, always_failing="notes3.txt")
    with serve_in_background(app) as url:
        with pytest.raises(PredictionFailures, match="terminal-3"):
            remote(url, cache_dir=tmp_path, max_retries=1, backoff_s=0.01).predict(SAMPLES)
        assert len(seen) == 4 + 2  # four answered, one asked twice
    healthy, healthy_seen = failing_endpoint(failures=0)
    with serve_in_background(healthy) as url:
        predictor = remote(url, cache_dir=tmp_path)
        # The resumed run's model name is the healthy endpoint's too: same settings, same cache.
        outputs = predictor.predict(SAMPLES)
    assert len(healthy_seen) == 1 and predictor.stats.cached == 4
    assert "notes3.txt" in outputs[3]


def test_a_folder_whose_tokenizer_has_no_pad_token_still_batches(tiny_model_dir, tmp_path):  # noqa: F811
    folder = tmp_path / "no_pad"
    shutil.copytree(tiny_model_dir, folder)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.pop("pad_token")
    config_path.write_text(json.dumps(config), encoding="utf-8")
    predictor = HfLocalPredictor(HfLocalConfig(folder, batch_size=4, max_new_tokens=4))
    assert predictor.model.tokenizer.pad_token == "<eos>"
    assert len(predictor.predict(SAMPLES)) == len(SAMPLES)
