"""Which model to train: a tiny decoder from scratch (default, CPU) or a local checkpoint (GPU).

The default is a Llama-style decoder of a few million parameters built around the project's own
tokenizer, so the whole CPT -> SFT -> RL chain runs on two CPU cores in minutes. Pointing
`checkpoint` at a local Hugging Face folder (e.g. a 0.5-8B Qwen or Llama) fine-tunes that model
instead, with the dtype and device given here; nothing is ever downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, LlamaConfig, PreTrainedModel, PreTrainedTokenizerFast

from bench.model_folder import check_model_folder

# Tokens that close a turn: generation stops at any of them (the chat template ends every message
# with <|end|>; <eos> closes a document).
STOP_TOKENS = ("<|end|>", "<eos>")

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class ModelConfig:
    """Model shape for from-scratch training, or a local checkpoint plus dtype and device.

    `checkpoint` set: the size fields are ignored and the checkpoint's own architecture is used.
    `device` "auto" picks CUDA when present, else CPU.
    """

    checkpoint: str | None = None
    hidden_size: int = 128
    num_layers: int = 2
    num_heads: int = 4
    intermediate_size: int = 384
    max_positions: int = 8192  # RoPE: only bounds positions (bench prompts run to ~8K tokens)
    dtype: str = "float32"
    device: str = "auto"
    seed: int = 0
    # CPU threads for torch (process-wide). 1 by default: the tiny model's matrices gain little
    # from a second thread and lose much when the cores are shared (measured here under load 8:
    # a forward+backward step 0.15 s on 1 thread, 1-5 s on 2). 0 leaves torch's default.
    cpu_threads: int = 1
    # LoRA through peft on every linear layer of a checkpoint (0: full fine-tuning, the
    # default). The finished folder holds the merged weights, so it loads like any other.
    lora_rank: int = 0
    lora_alpha: int = 32
    lora_dropout: float = 0.0

    def __post_init__(self) -> None:
        if self.lora_rank and not self.checkpoint:
            raise ValueError("ModelConfig.lora_rank needs a checkpoint: a model trained from "
                             "scratch has no pretrained weights to adapt")

    def __str__(self) -> str:
        if self.checkpoint:
            lora = f"_lora{self.lora_rank}" if self.lora_rank else ""
            return f"{Path(self.checkpoint).name}_{self.dtype}{lora}"
        return f"llama_{self.hidden_size}h_{self.num_layers}l_{self.num_heads}a_{self.dtype}"

    @property
    def torch_dtype(self) -> torch.dtype:
        if self.dtype not in DTYPES:
            raise ValueError(f"ModelConfig.dtype {self.dtype!r}: expected one of {sorted(DTYPES)}")
        return DTYPES[self.dtype]

    @property
    def torch_device(self) -> str:
        if self.device == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        return self.device


def load_tokenizer(folder: Path) -> PreTrainedTokenizerFast:
    """The project's tokenizer folder (or a checkpoint's), with a pad token guaranteed."""
    if not (Path(folder) / "tokenizer.json").exists():
        raise FileNotFoundError(f"no tokenizer.json in {folder}: build the tokenizer asset first")
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(folder))
    if tokenizer.pad_token is None:  # some checkpoints (Llama) ship none: pad with eos
        if tokenizer.eos_token is None:
            raise ValueError(f"tokenizer at {folder} has neither a pad nor an eos token")
        tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.chat_template is None:
        raise ValueError(f"tokenizer at {folder} has no chat_template")
    return tokenizer


def stop_token_ids(tokenizer: PreTrainedTokenizerFast) -> list[int]:
    """Ids of the turn-closing tokens the tokenizer knows, eos first."""
    ids = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    for token in STOP_TOKENS:
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is not None and token_id != tokenizer.unk_token_id and token_id not in ids:
            ids.append(token_id)
    return ids


def use_cpu_threads(config: ModelConfig) -> None:
    """Set torch's CPU thread count (process-wide) when the model runs on the CPU."""
    if config.cpu_threads and config.torch_device == "cpu":
        torch.set_num_threads(config.cpu_threads)


def new_model(config: ModelConfig, tokenizer: PreTrainedTokenizerFast) -> PreTrainedModel:
    """A freshly initialised model (seeded) sized for the tokenizer, or the local checkpoint."""
    torch.manual_seed(config.seed)
    use_cpu_threads(config)
    if config.checkpoint:
        model = _with_stop_tokens(load_model(Path(config.checkpoint), config), tokenizer)
        return with_lora(model, config) if config.lora_rank else model
    llama = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_heads,
        intermediate_size=config.intermediate_size,
        max_position_embeddings=config.max_positions,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=stop_token_ids(tokenizer),
        tie_word_embeddings=True,
    )
    model = AutoModelForCausalLM.from_config(llama, dtype=config.torch_dtype)
    return _with_stop_tokens(model, tokenizer).to(config.torch_device)


def load_model(folder: Path, config: ModelConfig) -> PreTrainedModel:
    """A trained folder (ours or a local checkpoint) in the configured dtype, on the device."""
    check_model_folder(folder)
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=config.torch_dtype)
    return model.to(config.torch_device)


def with_lora(model: PreTrainedModel, config: ModelConfig) -> PreTrainedModel:
    """The model with LoRA adapters (peft) on all its linear layers; only they train."""
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(r=config.lora_rank, lora_alpha=config.lora_alpha,
                      lora_dropout=config.lora_dropout, target_modules="all-linear",
                      task_type="CAUSAL_LM")
    return get_peft_model(model, lora)


def merged(model: PreTrainedModel) -> PreTrainedModel:
    """A LoRA-wrapped model with its adapters merged into the weights (a plain model as is)."""
    return model.merge_and_unload() if hasattr(model, "merge_and_unload") else model


def _with_stop_tokens(model: PreTrainedModel, tokenizer: PreTrainedTokenizerFast
                      ) -> PreTrainedModel:
    model.generation_config.eos_token_id = stop_token_ids(tokenizer)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def parameter_count(model: PreTrainedModel, trainable: bool = False) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable)
