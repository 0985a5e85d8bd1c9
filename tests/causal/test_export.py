"""Steering-vector export: safetensors and a llama.cpp control vector read back, the same
effect through the hook, MLP probes refused by name, the readout field of tasks."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest

from probebench.causal.effect import causal_test
from probebench.causal.export import (
    SteeringVector,
    gguf_direction_name,
    read_steering_vector,
    write_steering_vector,
)
from probebench.causal.readouts import build_plan
from probebench.causal.steer import SteeringRunner, hf_stack
from probebench.cli import main
from probebench.errors import InputError
from probebench.prompts import Prompt
from probebench.sites import Site
from probebench.tasks.anatomy import Item
from probebench.tasks.spec import ReadoutSpec, parse_tasks_text

REPO = Path(__file__).resolve().parents[2]
MLP = REPO / "registry" / "artifacts" / "verb-grammar-mlp-smollm2-135m-l20-v1"


def _vector(d: int = 576, layer: int = 21, sign: int = 1) -> SteeringVector:
    u = np.random.default_rng(4).standard_normal(d)
    return SteeringVector(model="smollm2-135m", model_hint="llama", layer=layer,
                          position="last_token", scale=2.5, sign=sign,
                          direction=(u / np.linalg.norm(u)).astype(np.float32),
                          probe="t/p", bundle_sha256="ab" * 32)


def test_the_control_vector_reads_back_with_gguf_as_llama_cpp_expects(tmp_path: Path) -> None:
    vec = _vector(sign=-1)
    paths = write_steering_vector(vec, tmp_path, num_layers=30)
    reader = gguf.GGUFReader(str(paths["gguf"]))
    arch = reader.fields["general.architecture"]
    assert bytes(arch.parts[arch.data[0]]).decode() == "controlvector"
    hint = reader.fields["controlvector.model_hint"]
    assert bytes(hint.parts[hint.data[0]]).decode() == "llama"
    count = reader.fields["controlvector.layer_count"]
    assert int(count.parts[count.data[0]][0]) == 1
    [tensor] = reader.tensors
    # probebench layer 21 = output of block 20 = llama.cpp's direction.20
    assert tensor.name == "direction.20" and tensor.n_elements == 576
    np.testing.assert_array_equal(np.asarray(tensor.data).reshape(-1),
                                  (2.5 * -1 * vec.direction).astype(np.float32))
    for path in paths.values():
        back = read_steering_vector(path)
        assert (back.layer, back.position, back.sign, back.model) == (21, "last_token", -1,
                                                                      "smollm2-135m")
        assert back.scale == pytest.approx(2.5)
        np.testing.assert_allclose(back.direction, vec.direction, atol=1e-6)


def test_layers_llama_cpp_cannot_hold_are_refused() -> None:
    assert gguf_direction_name(2, 30) == "direction.1"
    for layer in (0, 1, 30):
        with pytest.raises(InputError, match=f"layer {layer}"):
            gguf_direction_name(layer, 30)
    with pytest.raises(InputError, match="no such file"):
        read_steering_vector(Path("no-such.gguf"))


def test_the_exported_vector_through_the_hook_gives_the_same_effect(smollm,  # type: ignore[no-untyped-def]
                                                                    tmp_path: Path) -> None:
    vec = _vector()
    paths = write_steering_vector(vec, tmp_path, num_layers=smollm.identity.num_layers)
    back = read_steering_vector(paths["gguf"])
    items = [Item(id="a", prompts=(Prompt("The city of Oslo is in Norway.", label=1),))]
    readout = ReadoutSpec(kind="answer", suffix=" This statement is", positive=" True",
                          negative=" False")
    plan = build_plan(smollm, items, readout, Site(back.layer, back.position))
    runner = SteeringRunner(hf_stack(smollm, back.layer), plan.rows)
    base = plan.values(runner.log_probs())
    direct = plan.values(runner.log_probs(add=4.0 * vec.scale * vec.direction))
    exported = plan.values(runner.log_probs(add=4.0 * back.vector))
    np.testing.assert_allclose(exported, direct, atol=1e-5)
    assert abs(direct[0] - base[0]) > 1e-3


def test_an_mlp_probe_is_not_linear_a_result_not_an_error(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = causal_test(MLP)
    assert not result.applicable and result.reason is not None
    assert result.reason.startswith("not a linear probe")
    assert result.to_dict()["effect"] is None
    code = main(["steering-vector", str(MLP), "--out", str(tmp_path / "out"), "--scale", "1"])
    assert code == 2 and "is not linear" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_tasks_declare_steering_readouts_and_bad_kinds_are_named(tmp_path: Path) -> None:
    from probebench.tasks.catalog import TaskCatalog

    catalog = TaskCatalog.default()
    kinds = {t: getattr(catalog.spec(t).steering_readout, "kind", None)
             for t in ("verb_grammar", "refusal_harmful", "eval_awareness", "truth_cities")}
    assert kinds == {"verb_grammar": "candidates", "refusal_harmful": "openings",
                     "eval_awareness": "answer", "truth_cities": None}
    text = (REPO / "probebench" / "catalog" / "tasks.yaml").read_text("utf-8")
    bad = text.replace("    kind: openings\n", "    kind: refusals\n", 1)
    with pytest.raises(InputError, match="steering_readout"):
        parse_tasks_text(bad, tmp_path / "tasks.yaml")
