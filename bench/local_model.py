"""A local transformers causal-LM folder as a chat model: load, render, generate, stream.

Shared by `worldtrace serve` (bench/serve) and the hf_local predictor, so both give the same text
for the same request. The folder is a Hugging Face model folder (config.json, weights, tokenizer
files with a chat_template), e.g. {data}/models/sft_model; nothing is downloaded.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast, StoppingCriteria
from transformers.generation.streamers import BaseStreamer

from bench.model_folder import check_model_folder
from bench.official import REFERENCE_TEMPERATURE
from bench.stop_strings import cut_at_stop, safe_prefix_length

# finish_reason of a stream whose consumer cancelled it (never sent: nobody is listening).
CANCELLED = "cancelled"
# Our tokenizer closes every chat turn with <|end|> (CONTRACTS: tokenizer): a reply ends there
# even when the model's generation_config names only <eos>.
END_OF_TURN_TOKENS: tuple[str, ...] = ("<|end|>",)

Message = Mapping[str, str]


@dataclass(frozen=True)
class SamplingSettings:
    """What one request asks of generation (OpenAI names; temperature 0 means greedy)."""

    max_new_tokens: int = 256
    temperature: float = REFERENCE_TEMPERATURE
    top_p: float = 1.0
    n: int = 1
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass(frozen=True)
class Completion:
    """One generated reply: its text, how many tokens it took, why it ended (stop | length)."""

    text: str
    completion_tokens: int
    finish_reason: str


@dataclass(frozen=True)
class ChatResult:
    """The replies to one conversation and the length of its rendered prompt in tokens."""

    prompt_tokens: int
    choices: tuple[Completion, ...]


@dataclass(frozen=True)
class StreamPiece:
    """A text delta; the last piece of a stream carries finish_reason and the token count."""

    text: str
    finish_reason: str | None = None
    completion_tokens: int = 0


class ContextOverflow(ValueError):
    """The prompt leaves no room to generate within the model's context length."""


class LocalChatModel:
    """A causal LM and its tokenizer; generation is not thread-safe (callers serialise it)."""

    def __init__(self, model, tokenizer: PreTrainedTokenizerFast, name: str) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.context_length: int | None = getattr(model.config, "max_position_embeddings", None)
        self.end_ids = _end_token_ids(model, tokenizer)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None \
            else min(self.end_ids)

    @classmethod
    def load(cls, folder: Path | str, dtype: str = "auto", device: str | None = None
             ) -> LocalChatModel:
        """Load a local model folder; a clear error when it is not one."""
        folder = check_model_folder(folder)
        tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
        if not tokenizer.chat_template:
            raise ValueError(f"{folder}: the tokenizer has no chat_template, so chat messages "
                             "cannot be rendered (save one with tokenizer.chat_template = ...)")
        tokenizer.padding_side = "left"  # batched generation appends after the last real token
        if tokenizer.pad_token is None:  # many checkpoints ship none; padding is masked anyway
            tokenizer.pad_token = tokenizer.eos_token
        torch_dtype = "auto" if dtype == "auto" else getattr(torch, dtype)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch_dtype)
        model.to(device or ("cuda" if torch.cuda.is_available() else "cpu")).eval()
        return cls(model, tokenizer, folder.name)

    def render(self, messages: Sequence[Message]) -> str:
        """The prompt text for a conversation, ending with the assistant's opening."""
        return self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=True, tokenize=False)

    def prompt_tokens(self, messages: Sequence[Message]) -> int:
        """The length of a conversation's rendered prompt in tokens."""
        return len(self.tokenizer(self.render(messages), add_special_tokens=False)["input_ids"])

    def generate(self, conversations: Sequence[Sequence[Message]], settings: SamplingSettings
                 ) -> list[ChatResult]:
        """Reply to each conversation in one padded batch (settings.n replies each)."""
        batch = self.tokenizer([self.render(c) for c in conversations], return_tensors="pt",
                               padding=True, add_special_tokens=False).to(self.model.device)
        prompt_lengths = batch["attention_mask"].sum(dim=1).tolist()
        budget = self.budget(max(prompt_lengths), settings)
        copies = 1 if settings.greedy else settings.n  # greedy replies are identical: decode once
        with torch.inference_mode():
            if settings.seed is not None:
                torch.manual_seed(settings.seed)
            output = self.model.generate(**batch, **self._generation_kwargs(settings, budget),
                                         num_return_sequences=copies)
        new_tokens = output[:, batch["input_ids"].shape[1]:].tolist()
        results = []
        for i, prompt_tokens in enumerate(prompt_lengths):
            rows = new_tokens[i * copies:(i + 1) * copies]
            choices = [self._completion(row, settings.stop, budget) for row in rows]
            results.append(ChatResult(prompt_tokens, tuple(choices * (settings.n // copies))))
        return results

    def stream(self, messages: Sequence[Message], settings: SamplingSettings,
               cancel: threading.Event) -> Iterator[StreamPiece]:
        """One reply as text deltas; setting `cancel` (or closing the iterator) stops generation."""
        batch = self.tokenizer([self.render(messages)], return_tensors="pt",
                               add_special_tokens=False).to(self.model.device)
        budget = self.budget(batch["input_ids"].shape[1], settings)
        tokens: queue.Queue[int | None] = queue.Queue()
        failures: list[BaseException] = []

        def run() -> None:
            try:
                with torch.inference_mode():
                    self.model.generate(**batch, **self._generation_kwargs(settings, budget),
                                        streamer=_TokenQueue(tokens),
                                        stopping_criteria=[_Cancelled(cancel)])
            except BaseException as error:  # re-raised in the caller's thread below
                failures.append(error)
            finally:
                tokens.put(None)

        if settings.seed is not None:
            torch.manual_seed(settings.seed)
        worker = threading.Thread(target=run, name="generate-stream", daemon=True)
        worker.start()
        text = _IncrementalText(self.tokenizer)
        count, sent, finish = 0, 0, None
        try:
            while (token := tokens.get()) is not None:
                if cancel.is_set():  # the consumer left: no one reads the rest
                    finish = CANCELLED
                    break
                count += 1
                if token in self.end_ids:
                    finish = "stop"
                    break
                text.push(token)
                kept, found = cut_at_stop(text.tail(sent), settings.stop)
                end = sent + (len(kept) if found else safe_prefix_length(kept, settings.stop))
                if end > sent:
                    yield StreamPiece(text.text[sent:end])
                    sent = end
                if found:
                    finish = "stop"
                    break
        finally:
            cancel.set()
            worker.join()
        if failures:
            raise failures[0]
        if finish is None:  # ran out of budget: the held-back tail was not a stop after all
            if len(text.text) > sent:
                yield StreamPiece(text.text[sent:])
            finish = "length" if count >= budget else "stop"
        yield StreamPiece("", finish, count)

    def budget(self, prompt_tokens: int, settings: SamplingSettings) -> int:
        """max_new_tokens, capped by what the context window leaves."""
        if self.context_length is None:
            return settings.max_new_tokens
        room = self.context_length - prompt_tokens
        if room < 1:
            raise ContextOverflow(f"the prompt has {prompt_tokens} tokens; model {self.name} "
                                  f"has a context of {self.context_length}")
        return min(settings.max_new_tokens, room)

    def _generation_kwargs(self, settings: SamplingSettings, budget: int) -> dict:
        kwargs: dict = {"max_new_tokens": budget, "eos_token_id": sorted(self.end_ids),
                        "pad_token_id": self.pad_id}
        if settings.greedy:
            kwargs["do_sample"] = False
        else:
            kwargs.update(do_sample=True, temperature=settings.temperature, top_p=settings.top_p)
        if settings.stop:  # halts early; the text is cut before the stop string afterwards
            kwargs.update(stop_strings=list(settings.stop), tokenizer=self.tokenizer)
        return kwargs

    def _completion(self, row: list[int], stops: Sequence[str], budget: int) -> Completion:
        """Cut a generated row at its first end token (or padding) and its first stop string."""
        ends = self.end_ids | {self.pad_id}
        end = next((i for i, token in enumerate(row) if token in ends), None)
        kept = row if end is None else row[:end]
        text, found = cut_at_stop(self._decode(kept), stops)
        # The end token counts as generated; padding after a stop string does not.
        used = len(row) if end is None else end + (row[end] in self.end_ids)
        finish = "stop" if end is not None or found or used < budget else "length"
        return Completion(text, used, finish)

    def _decode(self, ids: Sequence[int]) -> str:
        # Special tokens stay: <think> and <predicted_observation> are special in our tokenizer.
        return self.tokenizer.decode(ids, skip_special_tokens=False,
                                     clean_up_tokenization_spaces=False)


def _end_token_ids(model, tokenizer: PreTrainedTokenizerFast) -> set[int]:
    """Every token that ends a reply: the generation config's, the tokenizer's, <|end|>."""
    ids: set[int] = set()
    configured = model.generation_config.eos_token_id
    ids.update(configured if isinstance(configured, list) else [configured])
    ids.add(tokenizer.eos_token_id)
    vocab = tokenizer.get_vocab()
    ids.update(vocab[t] for t in END_OF_TURN_TOKENS if t in vocab)
    ids.discard(None)
    if not ids:
        raise ValueError(f"model {tokenizer.name_or_path}: no end-of-sequence token configured")
    return ids


class _IncrementalText:
    """Detokenise one token at a time without re-decoding everything (the vLLM offsets trick):
    decode a short window and keep only what the newest token added, holding back a partial
    multi-byte character until it completes."""

    def __init__(self, tokenizer: PreTrainedTokenizerFast) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.text = ""
        self.prefix = 0
        self.read = 0

    def push(self, token: int) -> None:
        self.ids.append(token)
        before = self._decode(self.ids[self.prefix:self.read])
        after = self._decode(self.ids[self.prefix:])
        if len(after) > len(before) and not after.endswith("\ufffd"):
            self.text += after[len(before):]
            self.prefix, self.read = self.read, len(self.ids)

    def tail(self, start: int) -> str:
        return self.text[start:]

    def _decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False,
                                     clean_up_tokenization_spaces=False)


class _TokenQueue(BaseStreamer):
    """A streamer that hands each new token id to a queue (the first put is the prompt)."""

    def __init__(self, tokens: queue.Queue) -> None:
        self.tokens = tokens
        self.prompt_seen = False

    def put(self, value: torch.Tensor) -> None:
        if not self.prompt_seen:
            self.prompt_seen = True
            return
        for token in value.reshape(-1).tolist():
            self.tokens.put(token)

    def end(self) -> None:
        self.tokens.put(None)


class _Cancelled(StoppingCriteria):
    """Stops generation once the client has gone or a stop string was seen."""

    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs) -> torch.Tensor:
        return torch.full((input_ids.shape[0],), self.event.is_set(), dtype=torch.bool,
                          device=input_ids.device)
