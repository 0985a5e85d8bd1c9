"""``probebench steering-vector``: a linear probe's direction as a steering vector."""

from __future__ import annotations

import argparse
from pathlib import Path

from probebench.cli.common import positive_int, raw


def cmd_steering_vector(args: argparse.Namespace) -> int:
    from probebench.causal.export import export_steering_vector, read_steering_vector

    written = export_steering_vector(args.artifact, args.out, task=args.task,
                                     scale=args.scale, device=args.device,
                                     max_items=args.max_items)
    vector = read_steering_vector(written["safetensors"])
    print(f"wrote {written['safetensors']} and {written['gguf']}: layer {vector.layer} "
          f"({vector.position}), scale {vector.scale:.6g} (one std of the activations along "
          f"the direction), towards label 1")
    print(f"llama.cpp: llama-cli -m MODEL.gguf --control-vector-scaled {written['gguf']} "
          "STRENGTH (strength 1 = one std; llama.cpp adds it at every position)")
    return 0


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, found {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, found {text}")
    return value


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "steering-vector", help="export a linear probe's direction as a steering vector",
        **raw("Write a linear probe's unit direction, scaled to one standard deviation of "
              "the site's activations along it and pointing to label 1, as "
              "steering.safetensors (with model, layer, position, scale and sign) and as a "
              "llama.cpp control vector, steering.gguf (the format repeng writes; probebench "
              "layer L is llama.cpp's direction.<L-1>). The scale is measured on the "
              "probe's task (the model runs unless the activation cache holds it) unless "
              "--scale gives it. An MLP probe has no direction: an error. See "
              "docs/causal.md.",
              "examples:\n  probebench steering-vector "
              "registry/artifacts/truth-cities-smollm2-135m-l21-v1 --out steer/\n"
              "  probebench steering-vector probebench/truth-cities-smollm2-135m-l21-v1 "
              "--out steer/ --scale 2.5"))
    cmd.add_argument("artifact", metavar="ARTIFACT",
                     help="the artifact folder, or a registry id ORG/NAME")
    cmd.add_argument("--out", type=Path, required=True, help="output folder")
    cmd.add_argument("--task", default=None,
                     help="the task whose test prompts set the scale (default: the probe's)")
    cmd.add_argument("--scale", type=_positive_float, default=None,
                     help="the length of the vector at strength 1 (default: measured)")
    cmd.add_argument("--max-items", type=positive_int, default=200,
                     help="test items the scale is measured on (default: 200)")
    cmd.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                     help="where the model runs to measure the scale (default: auto)")
    cmd.set_defaults(func=cmd_steering_vector)


__all__ = ["register"]
