#!/usr/bin/env python3
"""Training with PyTorch autograd, independent of the C++ backward pass.

For a model (format v1) and a batch of windows it computes, in float64:
the mean cross-entropy over every position, the gradient of every tensor
(torch autograd through nextword_ref.Model.forward_all), and the losses of 10
AdamW steps with torch.optim.AdamW, torch's gradient clipping and the
learning-rate schedule of data/README.md's trainer description.

Used by make_training_fixtures.py and live_training_parity.py.
"""
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nextword_ref import Model  # noqa: E402

# The optimizer settings of the parity check (every one differs from its default,
# so a setting the C++ side ignores shows up). eps is large on purpose: Adam's
# first steps move every parameter by about lr * sign(g), and where a gradient
# is ~1e-7 of the largest one its sign is float32 rounding noise. With a small
# eps those parameters would move by +-lr at random and the (float32) C++ run
# and the (float64) reference would part ways on chaotic random models, which
# says nothing about the optimizer's code.
ADAMW = {"steps": 10, "warmup": 3, "lr": 5e-3, "min_lr": 5e-4, "weight_decay": 0.1,
         "beta1": 0.85, "beta2": 0.97, "eps": 1e-4, "clip": 0.5}


def learning_rate(o, step):
    """Linear warmup to lr, then cosine decay to min_lr at the last step."""
    if step < o["warmup"]:
        return o["lr"] * (step + 1) / o["warmup"]
    progress = min(1.0, (step - o["warmup"]) / max(o["steps"] - o["warmup"], 1))
    return o["min_lr"] + 0.5 * (o["lr"] - o["min_lr"]) * (1 + math.cos(math.pi * progress))


def batch_loss(model, inputs, targets):
    """Mean cross-entropy over every position of every window."""
    losses = []
    for ids, want in zip(inputs, targets):
        logits, _ = model.forward_all(ids)
        losses.append(F.cross_entropy(logits, torch.tensor(want), reduction="sum"))
    return torch.stack(losses).sum() / sum(len(t) for t in targets)


def trainable(model):
    for t in model.tensors.values():
        t.requires_grad_(True)
    return model.tensors


def gradients(model, inputs, targets):
    tensors = trainable(model)
    loss = batch_loss(model, inputs, targets)
    loss.backward()
    return loss.item(), {name: t.grad.flatten().tolist() for name, t in tensors.items()}


def adamw_losses(model, inputs, targets, o=ADAMW):
    """The loss before each of o['steps'] AdamW steps, and after the last."""
    tensors = trainable(model)
    decay = [t for t in tensors.values() if t.dim() == 2]
    no_decay = [t for t in tensors.values() if t.dim() != 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": o["weight_decay"]},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    losses = []
    for step in range(o["steps"]):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(o, step)
        optimizer.zero_grad()
        loss = batch_loss(model, inputs, targets)
        losses.append(loss.item())
        loss.backward()
        if o["clip"] > 0:
            torch.nn.utils.clip_grad_norm_(list(tensors.values()), o["clip"])
        optimizer.step()
    with torch.no_grad():
        losses.append(batch_loss(model, inputs, targets).item())
    return losses


def training_record(directory, inputs, targets):
    paths = (os.path.join(directory, "vocab.json"), os.path.join(directory, "weights.json"))
    loss, grads = gradients(Model(*paths), inputs, targets)
    return {"inputs": inputs, "targets": targets, "loss": loss, "grads": grads,
            "adamw": ADAMW, "adamw_losses": adamw_losses(Model(*paths), inputs, targets)}
