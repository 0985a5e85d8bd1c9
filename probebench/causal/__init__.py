"""The causal (steering) test of a linear probe's direction, and its steering-vector export.

``readouts`` turns a task's declared readout into token rows, ``steer`` runs them with a
direction added at the probe's site (or projected out), ``effect`` measures the probe's
effect against random control directions, ``export`` writes the direction as safetensors
and as a llama.cpp control vector. See docs/causal.md.
"""

from probebench.causal.effect import (
    DEFAULT_ALPHAS,
    N_CONTROLS,
    CausalResult,
    causal_effect,
    causal_test,
)
from probebench.causal.export import (
    SteeringVector,
    export_steering_vector,
    read_steering_vector,
    write_steering_vector,
)
from probebench.causal.readouts import ReadoutPlan, build_plan, task_readout
from probebench.causal.steer import Stack, SteeringRunner, hf_stack, steering_hook

__all__ = ["DEFAULT_ALPHAS", "N_CONTROLS", "CausalResult", "ReadoutPlan", "Stack",
           "SteeringRunner", "SteeringVector", "build_plan", "causal_effect", "causal_test",
           "export_steering_vector", "hf_stack", "read_steering_vector", "steering_hook",
           "task_readout", "write_steering_vector"]
