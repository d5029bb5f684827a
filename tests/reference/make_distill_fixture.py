#!/usr/bin/env python3
"""Writes tests/fixtures/distill/cases.json: distillation's loss and its
gradient with respect to the student's logits, by PyTorch autograd in
float64, for tests/unit/distillation_test.cpp (train --teacher):

    loss = mean over rows of (1 - w) CE(z, target) + w tau^2 KL(softmax(t / tau) || softmax(z / tau))

with torch's own cross_entropy and kl_div, independent of the C++ code.

    /usr/bin/python3 tests/reference/make_distill_fixture.py
"""
import json
import os
import random

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "distill", "cases.json")


def f32(values):
    return torch.tensor(values, dtype=torch.float32).to(torch.float64)


def case(rng, N, V, weight, tau, spread):
    z = f32([[rng.gauss(0, spread) for _ in range(V)] for _ in range(N)]).requires_grad_(True)
    t = f32([[rng.gauss(0, spread) for _ in range(V)] for _ in range(N)])
    targets = [rng.randrange(V) for _ in range(N)]
    ce = F.cross_entropy(z, torch.tensor(targets), reduction="sum")
    kl = F.kl_div(F.log_softmax(z / tau, dim=-1), F.log_softmax(t / tau, dim=-1),
                  log_target=True, reduction="sum")
    loss = ((1 - weight) * ce + weight * tau * tau * kl) / N
    loss.backward()
    return {"N": N, "V": V, "weight": weight, "temperature": tau,
            "logits": z.detach().flatten().tolist(), "teacher": t.flatten().tolist(),
            "targets": targets, "loss": loss.item(), "gradient": z.grad.flatten().tolist()}


def main():
    rng = random.Random(24)
    cases = [case(rng, 3, 5, 0.5, 2.0, 1.0), case(rng, 4, 11, 0.0, 1.0, 2.0),
             case(rng, 2, 7, 1.0, 4.0, 3.0), case(rng, 5, 50, 0.3, 0.5, 1.5),
             case(rng, 1, 300, 0.7, 2.0, 5.0)]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"cases": cases}, f)
    print("wrote %d cases to %s" % (len(cases), os.path.normpath(OUT)))


if __name__ == "__main__":
    main()
