"""Fine-tune every layer of FaceRes on the calibration crops of folds 1-4, choosing the epoch count on an
inner validation split of those folds (never on the test fold).

    PYTHONPATH=/work/research-cache/torch-site nice -n 15 \
        .venv/bin/python -m assurance.research.faceres_finetune.train \
        --crops /work/research-cache/faceres-crops.npz --output /work/research-cache/faceres-finetune

Loss: |log(1 + expected age) - log(1 + true age)| (the readers' own scale, which weighs a teenager's year
more than a 60-year-old's), plus L2-SP (a pull of every weight towards its original value, so that a few
thousand faces do not wipe out what the network learnt on millions). Augmentation: mirror, small shift,
scale and rotation, brightness and contrast. Each epoch is saved; the epoch with the lowest inner
validation loss (epoch 0 is the original network) is exported to ONNX as `best.onnx`.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from . import data as crops_data
from .network import FaceRes, expected_age, export_onnx

BATCH = 32
LEARNING_RATE = 1e-5  # the convolutions (Adam: a step of about this size on every weight, whatever its scale)
HEAD_LEARNING_RATE = 1e-4  # the dense layers after the pooled features
CLIP_NORM = 5.0
WARMUP_STEPS = 10
L2_SP = 1e-3
MAX_EPOCHS = 4
SEED = 20261127


def augment(faces: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """(b, 224, 224, 3) uint8 -> float pixels, each face mirrored at random, moved a little, relit a little."""
    x = faces.permute(0, 3, 1, 2).float()
    n = len(x)

    def uniform(low: float, high: float) -> torch.Tensor:
        return low + (high - low) * torch.rand(n, generator=generator)

    flip = torch.rand(n, generator=generator) < 0.5
    x = torch.where(flip[:, None, None, None], x.flip(-1), x)
    scale, angle = uniform(0.93, 1.07), uniform(-5, 5) * math.pi / 180
    shift_x, shift_y = uniform(-0.06, 0.06), uniform(-0.06, 0.06)  # of the half-width: about +-7 px
    theta = torch.stack(
        [
            torch.stack([scale * torch.cos(angle), -scale * torch.sin(angle), shift_x], dim=1),
            torch.stack([scale * torch.sin(angle), scale * torch.cos(angle), shift_y], dim=1),
        ],
        dim=1,
    )
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)  # black, as the crop
    contrast, brightness = uniform(0.8, 1.2), uniform(-20, 20)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    x = (x - mean) * contrast[:, None, None, None] + mean + brightness[:, None, None, None]
    return x.clamp(0, 255).permute(0, 2, 3, 1).contiguous()


def log_l1(predicted: torch.Tensor, true: torch.Tensor) -> torch.Tensor:
    return (torch.log1p(predicted) - torch.log1p(true)).abs().mean()


@torch.no_grad()
def predict(model: FaceRes, crops: np.ndarray, batch: int = 64) -> np.ndarray:
    model.eval()
    ages = [
        expected_age(model(torch.from_numpy(crops[i : i + batch]).float())["age"]).numpy()
        for i in range(0, len(crops), batch)
    ]
    return np.concatenate(ages).astype(np.float64)


def validation_line(epoch: int, predicted: np.ndarray, ages: np.ndarray, sets: np.ndarray) -> tuple[float, str]:
    loss = float(np.abs(np.log1p(predicted) - np.log1p(ages)).mean())
    parts = [f"epoch {epoch}: inner validation log-L1 {loss:.4f}, MAE {np.abs(predicted - ages).mean():.2f} y"]
    for name in crops_data.SETS:
        adults = (sets == name) & (ages >= 25) & (ages <= 40)
        teens = (sets == name) & (ages >= 13) & (ages <= 17)
        if adults.any():
            parts.append(f"{name} 25-40 bias {np.mean(predicted[adults] - ages[adults]):+.2f} (n={adults.sum()})")
        if teens.any():
            parts.append(f"13-17 MAE {np.abs(predicted[teens] - ages[teens]).mean():.2f} (n={teens.sum()})")
    return loss, ", ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crops", type=Path, required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=MAX_EPOCHS)
    parser.add_argument("--stop-by", help="UTC HH:MM: no epoch is started that would end after it")
    parser.add_argument("--lr", type=float, default=LEARNING_RATE, help="learning rate of the convolutions")
    parser.add_argument("--head-lr", type=float, default=HEAD_LEARNING_RATE, help="learning rate of the dense layers")
    parser.add_argument("--all-folds", action="store_true", help="train on all of folds 1-4, export final.onnx")
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    started = time.monotonic()

    data = crops_data.load(args.crops)
    train, validation, test = crops_data.splits(data)
    if args.all_folds:
        train, validation = np.sort(np.concatenate([train, validation])), validation[:0]
    named = (("inner training", train), ("inner validation", validation), ("test fold (unused)", test))
    if args.all_folds:
        named = (("training (all of folds 1-4)", train), ("test fold (unused)", test))
    for name, chosen in named:
        by_set = ", ".join(f"{s} {int((data.sets[chosen] == s).sum())}" for s in crops_data.SETS)
        print(f"{name}: {len(chosen)} faces ({by_set})", flush=True)
    args.output.mkdir(parents=True, exist_ok=True)

    model = FaceRes()
    anchors = {name: p.detach().clone() for name, p in model.weights.items()}
    heads = model.head_keys()
    groups = [
        {"params": [p for key, p in model.weights.items() if key not in heads], "base_lr": args.lr},
        {"params": [p for key, p in model.weights.items() if key in heads], "base_lr": args.head_lr},
    ]
    optimiser = torch.optim.Adam(groups, lr=args.lr)
    print(f"learning rates: convolutions {args.lr:g}, dense layers {args.head_lr:g}; L2-SP {L2_SP:g}", flush=True)
    v_crops, v_ages, v_sets = data.crops[validation], data.ages[validation].astype(np.float64), data.sets[validation]
    t = time.monotonic()
    best_loss = float("inf")
    if len(validation):
        best_loss, line = validation_line(0, predict(model, v_crops), v_ages, v_sets)
        print(f"{line} [{time.monotonic() - t:.0f} s]", flush=True)
    best_epoch, step, epoch_seconds = 0, 0, []
    torch.save(model.state_dict(), args.output / "epoch-0.pt")
    for epoch in range(1, args.epochs + 1):
        if args.stop_by and epoch_seconds:
            now = datetime.datetime.now(datetime.UTC)
            hour, minute = map(int, args.stop_by.split(":"))
            if now + datetime.timedelta(seconds=max(epoch_seconds)) > now.replace(hour=hour, minute=minute):
                print(f"stopping before epoch {epoch}: it would end after {args.stop_by} UTC", flush=True)
                break
        t = time.monotonic()
        model.train()
        order = torch.randperm(len(train), generator=generator).numpy()
        total = 0.0
        for number, first in enumerate(range(0, len(order), BATCH), start=1):
            chosen = np.sort(train[order[first : first + BATCH]])
            faces = augment(torch.from_numpy(data.crops[chosen]), generator)
            true = torch.from_numpy(data.ages[chosen].astype(np.float32))
            fit = log_l1(expected_age(model(faces)["age"]), true)
            tether = sum(((p - anchors[name]) ** 2).sum() for name, p in model.weights.items())
            loss = fit + L2_SP * tether
            step += 1
            for group in optimiser.param_groups:
                group["lr"] = group["base_lr"] * min(1.0, step / WARMUP_STEPS)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.weights.parameters(), CLIP_NORM)
            optimiser.step()
            total += float(fit.detach())
            if number % 20 == 0:
                print(f"  epoch {epoch} step {number}: training log-L1 {total / number:.4f}, "
                      f"L2-SP {float(tether.detach()):.4f}, {time.monotonic() - t:.0f} s", flush=True)  # fmt: skip
        train_seconds = time.monotonic() - t
        if args.all_folds:
            epoch_seconds.append(train_seconds)
            print(f"epoch {epoch}: training {train_seconds:.0f} s", flush=True)
            continue
        torch.save(model.state_dict(), args.output / f"epoch-{epoch}.pt")
        loss, line = validation_line(epoch, predict(model, v_crops), v_ages, v_sets)
        epoch_seconds.append(time.monotonic() - t)
        print(f"{line} [training {train_seconds:.0f} s, with validation {epoch_seconds[-1]:.0f} s]", flush=True)
        if loss < best_loss:
            best_loss, best_epoch = loss, epoch
    if args.all_folds:
        export_onnx(model, args.output / "final.onnx")
        print(f"fine-tuned on all of folds 1-4 for {len(epoch_seconds)} epochs, exported final.onnx; "
              f"total {time.monotonic() - started:.0f} s", flush=True)  # fmt: skip
        return
    model.load_state_dict(torch.load(args.output / f"epoch-{best_epoch}.pt"))
    export_onnx(model, args.output / "best.onnx")
    (args.output / "best.json").write_text(json.dumps({"epoch": best_epoch, "inner_validation_log_l1": best_loss}))
    print(f"chosen on the inner validation split: epoch {best_epoch} (log-L1 {best_loss:.4f}); "
          f"total {time.monotonic() - started:.0f} s", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
