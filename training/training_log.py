"""What a training run records as it runs: loss curve, tokens seen, wall time, tokens/s.

A transformers TrainerCallback fills a `TrainingLog` at every logging step; the log is written
as training_log.json beside the model (and each checkpoint) and drawn as loss_curve.png. A resumed
run starts from the checkpoint's log, and the curves come from the Trainer's restored log
history, so the figures describe the whole run, not only its last leg.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

LOG_FILE = "training_log.json"
PLOT_FILE = "loss_curve.png"


@dataclass
class TrainingLog:
    """Figures of one training stage (cpt, sft, rl)."""

    stage: str
    model: str = ""
    parameters: int = 0
    steps: int = 0
    tokens_seen: int = 0
    wall_seconds: float = 0.0
    loss_curve: list[dict[str, float]] = field(default_factory=list)
    reward_curve: list[dict[str, float]] = field(default_factory=list)
    resumed_from_step: int = 0
    config: dict[str, Any] = field(default_factory=dict)
    # Loss on held-out samples at the end of training (SFT on sft_split's "validation"): each
    # sample's mean target-token loss, averaged; None when the stage had no validation set.
    eval_loss: float | None = None
    validation_samples: int = 0

    @property
    def tokens_per_second(self) -> float:
        return self.tokens_seen / self.wall_seconds if self.wall_seconds else 0.0

    @property
    def final_loss(self) -> float | None:
        return self.loss_curve[-1]["loss"] if self.loss_curve else None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "tokens_per_second": round(self.tokens_per_second, 1),
                "final_loss": self.final_loss}

    def write(self, folder: Path) -> Path:
        path = Path(folder) / LOG_FILE
        path.write_text(json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")
        return path

    @classmethod
    def read(cls, folder: Path) -> TrainingLog:
        data = json.loads((Path(folder) / LOG_FILE).read_text())
        data.pop("tokens_per_second", None)
        data.pop("final_loss", None)
        return cls(**data)

    def summary(self) -> str:
        loss = f"{self.final_loss:.3f}" if self.final_loss is not None else "n/a"
        held_out = (f", eval loss {self.eval_loss:.3f} on {self.validation_samples} validation "
                    "samples" if self.eval_loss is not None else "")
        return (f"{self.stage}: {self.steps} steps, {self.tokens_seen:,} tokens in "
                f"{self.wall_seconds:.1f} s ({self.tokens_per_second:,.0f} tokens/s), "
                f"final loss {loss}{held_out}")


class TrainingLogCallback(TrainerCallback):
    """Fills a TrainingLog from the Trainer's logs; `tokens_in_batch` counts what the step saw."""

    def __init__(self, log: TrainingLog) -> None:
        self.log = log
        self._started = 0.0
        self._wall_before = log.wall_seconds

    def on_train_begin(self, args: TrainingArguments, state: TrainerState,
                       control: TrainerControl, **kwargs: Any) -> None:
        self._started = time.perf_counter()
        self.log.resumed_from_step = state.global_step

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
               logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        self._update(state)

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                **kwargs: Any) -> None:
        """Keep the log beside each checkpoint, so a resumed run continues its curves."""
        self._update(state)
        checkpoint = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if checkpoint.is_dir():
            self.log.write(checkpoint)

    def on_train_end(self, args: TrainingArguments, state: TrainerState,
                     control: TrainerControl, **kwargs: Any) -> None:
        self._update(state)

    def _update(self, state: TrainerState) -> None:
        self.log.steps = state.global_step
        self.log.tokens_seen = max(self.log.tokens_seen, int(state.num_input_tokens_seen))
        self.log.wall_seconds = self._wall_before + time.perf_counter() - self._started
        # The Trainer's log history is restored with a checkpoint, so the curves span resumes.
        self.log.loss_curve = _curve(state.log_history, "loss")
        self.log.reward_curve = _curve(state.log_history, "reward")


def _curve(history: list[dict[str, Any]], name: str) -> list[dict[str, float]]:
    return [{"step": entry["step"], name: float(entry[name])}
            for entry in history if name in entry and "step" in entry]


def plot_curves(log: TrainingLog, path: Path) -> Path:
    """Loss curve (and reward curve for RL) as a PNG."""
    from sources.plots import plt, write_png  # matplotlib only when a chart is drawn

    curves = [("loss", log.loss_curve)]
    if log.reward_curve:
        curves.append(("reward", log.reward_curve))
    figure, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 3.2), squeeze=False)
    for axis, (name, points) in zip(axes[0], curves, strict=True):
        axis.plot([p["step"] for p in points], [p[name] for p in points], marker=".")
        axis.set_xlabel("step")
        axis.set_ylabel(name)
        axis.set_title(f"{log.stage} {name}")
        axis.grid(alpha=0.3)
    figure.tight_layout()
    return write_png(figure, path, dpi=90)
