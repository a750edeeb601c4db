"""Causal LM loss weighted per token, and the Trainer that uses it for CPT and SFT.

Each target token t contributes  w_t * CE_t / N,  where N is the number of target positions in
the (accumulated) batch, not the sum of the weights: so a weight-0 token gives exactly no
gradient, halving a weight halves exactly that token's contribution, and one token's weight never
changes another token's share (normalising by sum(w) would). SFT reuses the same loss with
weight 0 on the prompt and 1 on the assistant target.

Evaluation (Trainer.evaluate, model in eval mode) reports a figure that reads on its own: each
sample's weighted mean  sum_t w_t * CE_t / sum_t w_t  (for SFT the mean cross-entropy of its
target tokens; prompt tokens count neither above nor below the line), averaged over the
samples. The Trainer averages batch losses weighted by batch size, so a mean over the rows of
each batch makes eval_loss the exact mean over samples, whatever the batch size.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from transformers import Trainer

IGNORE = -100  # label of padding: not a target position, not counted in N


def weighted_causal_lm_loss(logits: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor,
                            num_targets: int | torch.Tensor | None = None) -> torch.Tensor:
    """sum_t w_t * CE(logits_{t-1}, labels_t) / N over the shifted positions.

    logits (B, T, V); labels (B, T) with IGNORE at padding; weights (B, T) aligned with labels
    (the weight of the token being predicted). N = `num_targets` (for gradient accumulation:
    the target count of the whole accumulated batch) or this batch's count of non-IGNORE labels.
    """
    weighted, valid = _weighted_token_losses(logits, labels, weights)
    if num_targets is None:
        num_targets = valid.sum()
    return weighted.sum() / torch.as_tensor(num_targets, device=weighted.device).clamp(min=1)


def weighted_mean_loss_per_sample(logits: torch.Tensor, labels: torch.Tensor,
                                  weights: torch.Tensor) -> torch.Tensor:
    """Mean over the rows of  sum_t w_t * CE_t / sum_t w_t  (the evaluation loss); rows with
    no weight are left out, NaN when no row has any (the Trainer drops non-finite losses)."""
    weighted, valid = _weighted_token_losses(logits, labels, weights)
    row_weight = (weights[:, 1:].to(weighted.dtype) * valid).sum(dim=1)
    kept = row_weight > 0
    return (weighted.sum(dim=1)[kept] / row_weight[kept]).mean()


def _weighted_token_losses(logits: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor
                           ) -> tuple[torch.Tensor, torch.Tensor]:
    """(w_t * CE_t, valid) over the shifted positions, both (B, T - 1); 0 at padding."""
    shift_logits = logits[:, :-1, :].float()
    shift_labels = labels[:, 1:]
    token_loss = F.cross_entropy(shift_logits.reshape(-1, shift_logits.size(-1)),
                                 shift_labels.reshape(-1), ignore_index=IGNORE, reduction="none")
    valid = shift_labels != IGNORE
    weighted = token_loss.view_as(shift_labels) * weights[:, 1:].to(token_loss.dtype) * valid
    return weighted, valid


class WeightedCollator:
    """Pads input_ids / loss_weights rows into tensors; labels are the ids, IGNORE at padding.

    `uniform_weights` replaces every weight by 1.0 (the "CPT without loss weighting" ablation).
    """

    def __init__(self, pad_token_id: int, uniform_weights: bool = False) -> None:
        self.pad_token_id = pad_token_id
        self.uniform_weights = uniform_weights

    def __call__(self, rows: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        width = max(len(row["input_ids"]) for row in rows)
        batch = {name: torch.full((len(rows), width), fill, dtype=dtype)
                 for name, fill, dtype in (("input_ids", self.pad_token_id, torch.long),
                                           ("labels", IGNORE, torch.long),
                                           ("attention_mask", 0, torch.long),
                                           ("loss_weights", 0.0, torch.float32))}
        for i, row in enumerate(rows):
            n = len(row["input_ids"])
            if len(row["loss_weights"]) != n:
                raise ValueError(f"row {i}: {n} input_ids, {len(row['loss_weights'])} weights")
            ids = torch.as_tensor(row["input_ids"], dtype=torch.long)
            batch["input_ids"][i, :n] = ids
            batch["labels"][i, :n] = ids
            batch["attention_mask"][i, :n] = 1
            batch["loss_weights"][i, :n] = (
                1.0 if self.uniform_weights
                else torch.as_tensor(row["loss_weights"], dtype=torch.float32))
        return batch


class WeightedLossTrainer(Trainer):
    """transformers Trainer whose loss is `weighted_causal_lm_loss` (batches carry loss_weights),
    and `weighted_mean_loss_per_sample` when it evaluates."""

    # The loss is normalised by the accumulated batch's target count: no further division by
    # the accumulation steps.
    loss_is_scaled_for_ga = True

    def compute_loss(self, model: torch.nn.Module, inputs: dict[str, torch.Tensor],
                     return_outputs: bool = False,
                     num_items_in_batch: torch.Tensor | int | None = None
                     ) -> torch.Tensor | tuple[torch.Tensor, Any]:
        weights = inputs.pop("loss_weights")
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        if not model.training:  # Trainer.evaluate: the per-sample weighted mean (docstring)
            loss = weighted_mean_loss_per_sample(outputs.logits, labels, weights)
        else:
            loss = weighted_causal_lm_loss(outputs.logits, labels, weights, num_items_in_batch)
        return (loss, outputs) if return_outputs else loss
