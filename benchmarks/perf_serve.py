"""Local-model predictors and `worldtrace serve`: samples/s and tokens/s.

    python benchmarks/perf_serve.py [--model DIR] [--bench-dir DIR] [--samples 64]
                                    [--max-new-tokens 32] [--batch-size 8] [--concurrency 8]

--model: a model folder (e.g. data/models/sft_model); default a tiny random-init Llama with a
tokenizer trained on the spot (tests/tiny_lm.py), which measures the machinery, not a model.
--bench-dir: files in the official layout (<domain>_test.jsonl); default synthetic terminal
samples with 0-7 history turns. Greedy decoding, fixed max_new_tokens, so runs compare.

Prints, for the same samples:
1. hf_local: the model in this process, padded batches of --batch-size;
2. openai_compatible -> serve: the official client, --concurrency requests in flight, against
   a server in its own process on 127.0.0.1 whose worker batches concurrent requests (batches
   and largest batch printed);
3. the same with one request in flight (no server-side batching);
4. a streamed request: time to the first content chunk and chunks/s.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo, when run as a file

import httpx  # noqa: E402
import openai  # noqa: E402
import torch  # noqa: E402

from bench.endpoint import EndpointConfig  # noqa: E402
from bench.official import chat_messages, read_official  # noqa: E402
from bench.predictors.hf_local import HfLocalConfig, HfLocalPredictor  # noqa: E402
from bench.predictors.openai_compatible import (  # noqa: E402
    OpenAICompatibleConfig,
    OpenAICompatiblePredictor,
)
from bench.sample import BenchSample  # noqa: E402
from bench.serve.run import ServeConfig  # noqa: E402
from benchmarks._measure import (  # noqa: E402
    REPO,
    load_average,
    peak_rss_mb,
    result_line,
    stopwatch,
)


def synthetic_samples(count: int) -> list[BenchSample]:
    samples = []
    for n in range(count):
        history = [(f"ls -la dir{n}/{t}", f"total {t}\n-rw-r--r-- 1 u u {n} file{t}.txt")
                   for t in range(n % 8)]
        samples.append(BenchSample(
            domain="terminal", id=f"perf-{n}", history=history, current_action=f"cat file{n}",
            reference="hello", system_prompt="You simulate a Linux shell.",
            turn_idx=len(history) + 1, total_turns=len(history) + 1, trajectory_id=f"t{n}",
            source="perf"))
    return samples


def report(label: str, seconds: float, samples: int, tokens: int, extra: str = "") -> None:
    print(f"{label:44} {samples / seconds:8.2f} samples/s {tokens / seconds:9.1f} tokens/s"
          f"  ({samples} samples, {seconds:.2f} s){extra}")


def run_remote(url: str, samples: list[BenchSample], args, concurrency: int, health) -> float:
    """Predict every sample through the server; prints the line, returns samples/s."""
    predictor = OpenAICompatiblePredictor(OpenAICompatibleConfig(
        EndpointConfig(url, concurrency=concurrency), temperature=0.0,
        max_tokens=args.max_new_tokens))
    before = health()
    with stopwatch() as lap:
        predictor.predict(samples)
    seconds = lap.wall
    after = health()
    batches = after["batches"] - before["batches"]
    report(f"openai_compatible -> serve, {concurrency} in flight", seconds, len(samples),
           predictor.endpoint.stats.completion_tokens,
           f"; server batches {batches}, largest {after['largest_batch']}")
    return len(samples) / seconds


def run_stream(url: str, sample: BenchSample, args) -> None:
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    model = client.models.list().data[0].id
    start = time.perf_counter()
    first, chunks = None, 0
    for chunk in client.chat.completions.create(model=model, messages=chat_messages(sample),
                                                temperature=0, max_tokens=args.max_new_tokens,
                                                stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            first = first or time.perf_counter() - start
            chunks += 1
    total = time.perf_counter() - start
    print(f"{'stream, one request':44} first chunk {1000 * (first or total):.1f} ms, "
          f"{chunks} chunks in {total:.2f} s ({chunks / total:.1f} chunks/s)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served_in_subprocess(config: ServeConfig) -> Iterator[str]:
    """The server in its own process, as `worldtrace serve` runs (no GIL shared with the
    client); yields its base URL once /health answers."""
    code = ("import sys; from pathlib import Path; from bench.serve.run import ServeConfig, serve;"
            f" serve(ServeConfig(Path({str(config.model_dir)!r}), port={config.port},"
            f" max_batch={config.max_batch}, default_max_tokens={config.default_max_tokens},"
            f" threads={config.threads!r}))")
    server = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{config.port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"{url}/health").raise_for_status()
                break
            except httpx.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.2)
        yield f"{url}/v1"
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path)
    parser.add_argument("--bench-dir", type=Path)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as scratch, stopwatch() as whole:
        model_dir = args.model
        if model_dir is None:
            from tests.tiny_lm import build_tiny_model
            model_dir = build_tiny_model(Path(scratch) / "tiny_lm")
        if args.bench_dir:
            samples, problems = read_official(args.bench_dir)
            samples = samples[:args.samples]
            print(f"{len(samples)} samples from {args.bench_dir} ({len(problems)} problems)")
        else:
            samples = synthetic_samples(args.samples)
        local = HfLocalPredictor(HfLocalConfig(model_dir, batch_size=args.batch_size,
                                               max_new_tokens=args.max_new_tokens))
        print(f"model {model_dir} on {local.model.model.device} "
              f"({torch.get_num_threads()} torch threads), "
              f"{sum(p.numel() for p in local.model.model.parameters()):,} parameters")
        local.predict(samples[:2])  # warm-up
        local.stats.completion_tokens = 0
        with stopwatch() as lap:
            local.predict(samples)
        report(f"hf_local, batch {args.batch_size}", lap.wall, len(samples),
               local.stats.completion_tokens)
        local_rate = len(samples) / lap.wall
        config = ServeConfig(model_dir, port=free_port(), max_batch=args.batch_size,
                             default_max_tokens=args.max_new_tokens, threads=args.threads)
        with served_in_subprocess(config) as url:
            def health() -> dict:
                return httpx.get(url.removesuffix("/v1") + "/health").json()["worker"]

            served_rate = run_remote(url, samples, args, args.concurrency, health)
            run_remote(url, samples, args, 1, health)
            run_stream(url, samples[-1], args)
    # A sample is one turn to predict; turns_per_s is the served rate, --concurrency in flight;
    # peak_rss_mb the larger of this process and the server's (ended: a child).
    print(result_line(turns=len(samples), turns_per_s=served_rate, local_turns_per_s=local_rate,
                      wall_s=whole.wall, peak_rss_mb=max(peak_rss_mb(), peak_rss_mb(True)),
                      load_avg=load_average()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
