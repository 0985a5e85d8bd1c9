"""A linear probe's direction as a steering vector: safetensors and a llama.cpp control vector.

Two files, both holding ``vector = scale * sign * u`` (``u`` the probe's unit direction,
pointing to its score's class ``classes[1]``; ``sign`` +1 where that class is label 1, -1
where it is label 0; ``scale`` the standard deviation of the site's activations along
``u`` over the task's test prompts), so that strength 1 moves the residual stream by one
standard deviation towards label 1:

``<name>.safetensors``  tensors ``direction`` (unit, float32) and ``vector`` (scaled);
                        metadata ``model``, ``layer``, ``position``, ``scale``, ``sign``,
                        ``probe``, ``bundle_sha256`` (strings, as safetensors requires).
``<name>.gguf``         the control-vector format that repeng's ``export_gguf`` writes and
                        ``llama-cli --control-vector`` (``--control-vector-scaled FILE S``)
                        reads: ``general.architecture = "controlvector"``,
                        ``controlvector.model_hint`` (the model's ``model_type``, e.g.
                        ``llama``), ``controlvector.layer_count`` (the number of direction
                        tensors, 1, as repeng counts them), one float32 tensor
                        ``direction.<N>``; plus ``probebench.*`` keys that llama.cpp ignores.

Layer numbering. probebench's layer ``L`` is Hugging Face's ``hidden_states[L]``: the
output of block ``L - 1`` (blocks counted from 0). llama.cpp loads ``direction.N`` into
its per-layer tensor ``N`` (``common_control_vector_load_one`` writes it at offset
``(N - 1) * n_embd``; ``llama_adapter_cvec::apply`` fills layer ``il`` from offset
``(il - 1) * n_embd``) and adds it to the output of block ``il = N`` (``build_cvec`` after
the block's feed-forward residual), as repeng's ``direction.<layer>`` is the output of
``model.layers[layer]``. So ``N = L - 1``. llama.cpp has no ``direction.0``, so layers 0
(the embeddings) and 1 cannot be written; nor can the last layer, which Hugging Face takes
after the final norm while llama.cpp adds before it. llama.cpp adds the vector at every
position, where the causal test adds it at the site's positions only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from probebench.errors import InputError

__all__ = ["SteeringVector", "export_steering_vector", "gguf_direction_name",
           "read_steering_vector", "write_steering_vector"]

_DIRECTION = re.compile(r"^direction\.(\d+)$")


@dataclass(frozen=True)
class SteeringVector:
    """A steering vector and where it applies."""

    model: str
    model_hint: str          #: the model's ``model_type`` (GGUF ``controlvector.model_hint``)
    layer: int               #: probebench's layer (``hidden_states[layer]``)
    position: str            #: the site's position (llama.cpp applies it everywhere)
    scale: float             #: std of the activations along ``direction``
    sign: int                #: +1 where ``classes[1]`` is label 1, -1 where it is 0
    direction: np.ndarray    #: unit, float32, ``(d,)``, towards the probe's ``classes[1]``
    probe: str = ""
    bundle_sha256: str = ""

    @property
    def vector(self) -> np.ndarray:
        """``scale * sign * direction``, float32: strength 1 is one std towards label 1."""
        return np.asarray(self.scale * self.sign * self.direction, dtype=np.float32)


def gguf_direction_name(layer: int, num_layers: int) -> str:
    """The llama.cpp tensor name of probebench's ``layer`` (see the module doc)."""
    if layer < 2:
        raise InputError(f"layer {layer}: llama.cpp control vectors start at the output of "
                         "block 1 (direction.1 = probebench layer 2); layers 0 and 1 cannot "
                         "be written")
    if layer >= num_layers:
        raise InputError(f"layer {layer} is the model's last (Hugging Face reads it after the "
                         "final norm; llama.cpp adds control vectors before it)")
    return f"direction.{layer - 1}"


def write_steering_vector(vector: SteeringVector, out_dir: Path, *, num_layers: int,
                          name: str = "steering") -> dict[str, Path]:
    """Write ``<name>.safetensors`` and ``<name>.gguf`` into ``out_dir``; returns both
    paths by format."""
    import gguf
    from safetensors.numpy import save_file

    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"{out_dir}: --out must be a folder; a file is there")
    tensor = gguf_direction_name(vector.layer, num_layers)
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = {"model": vector.model, "model_hint": vector.model_hint,
            "layer": str(vector.layer), "position": vector.position,
            "scale": repr(float(vector.scale)), "sign": str(vector.sign),
            "probe": vector.probe, "bundle_sha256": vector.bundle_sha256}
    st_path = out_dir / f"{name}.safetensors"
    save_file({"direction": np.ascontiguousarray(vector.direction, dtype=np.float32),
               "vector": np.ascontiguousarray(vector.vector)}, str(st_path), metadata=meta)
    gguf_path = out_dir / f"{name}.gguf"
    writer = gguf.GGUFWriter(str(gguf_path), "controlvector")
    writer.add_string("controlvector.model_hint", vector.model_hint)
    writer.add_uint32("controlvector.layer_count", 1)
    for key in ("model", "position", "probe", "bundle_sha256"):
        writer.add_string(f"probebench.{key}", meta[key])
    writer.add_uint32("probebench.layer", vector.layer)
    writer.add_float32("probebench.scale", float(vector.scale))
    writer.add_int32("probebench.sign", int(vector.sign))
    writer.add_tensor(tensor, vector.vector)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return {"safetensors": st_path, "gguf": gguf_path}


def _field(reader: Any, key: str) -> Any:
    field = reader.fields.get(key)
    if field is None:
        return None
    value = field.parts[field.data[0]]
    if field.types and field.types[0].name == "STRING":
        return bytes(value).decode("utf-8")
    return value.tolist()[0]


def read_steering_vector(path: Path) -> SteeringVector:
    """Read a file ``write_steering_vector`` wrote (``.safetensors`` or ``.gguf``); a
    control vector from elsewhere reads too (one ``direction.N`` tensor: layer ``N + 1``,
    scale its norm, sign +1)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if path.suffix == ".safetensors":
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as f:
            meta = f.metadata() or {}
            missing = [k for k in ("model", "layer", "position", "scale", "sign")
                       if k not in meta]
            if missing or "direction" not in set(f.keys()):
                raise InputError(f"{path}: not a probebench steering vector (missing "
                                 f"{', '.join(missing) or 'tensor direction'})")
            direction = f.get_tensor("direction")
        return SteeringVector(model=meta["model"], model_hint=meta.get("model_hint", ""),
                              layer=int(meta["layer"]), position=meta["position"],
                              scale=float(meta["scale"]), sign=int(meta["sign"]),
                              direction=direction, probe=meta.get("probe", ""),
                              bundle_sha256=meta.get("bundle_sha256", ""))
    import gguf

    try:
        reader = gguf.GGUFReader(str(path))
    except Exception as exc:  # the reader raises bare ValueErrors on a malformed file
        raise InputError(f"{path}: not a GGUF file ({type(exc).__name__}: {exc})") from None
    arch = _field(reader, "general.architecture")
    if arch != "controlvector":
        raise InputError(f"{path}: general.architecture is {arch!r}, expected "
                         "'controlvector'")
    found = [(t, _DIRECTION.match(t.name)) for t in reader.tensors]
    dirs = [(t, m) for t, m in found if m is not None]
    if len(dirs) != 1:
        raise InputError(f"{path}: expected one direction.<N> tensor; found {len(dirs)}")
    tensor, match = dirs[0]
    vec = np.asarray(tensor.data, dtype=np.float32).reshape(-1)
    layer = int(match.group(1)) + 1
    scale = _field(reader, "probebench.scale")
    sign = _field(reader, "probebench.sign")
    norm = float(np.linalg.norm(vec))
    scale = float(scale) if scale is not None else norm
    sign = int(sign) if sign is not None else 1
    direction = vec / (scale * sign) if scale else vec
    return SteeringVector(model=_field(reader, "probebench.model") or "",
                          model_hint=_field(reader, "controlvector.model_hint") or "",
                          layer=layer, position=_field(reader, "probebench.position") or "",
                          scale=scale, sign=sign, direction=direction.astype(np.float32),
                          probe=_field(reader, "probebench.probe") or "",
                          bundle_sha256=_field(reader, "probebench.bundle_sha256") or "")


def export_steering_vector(artifact: str | Path, out: str | Path, *,
                           task: str | None = None, scale: float | None = None,
                           device: str = "auto", max_items: int | None = 200
                           ) -> dict[str, Path]:
    """Export a linear probe's direction as ``steering.safetensors`` and
    ``steering.gguf`` in ``out`` (see the module doc). ``artifact`` is a folder or a
    registry id (``load_probe``). ``scale`` left out is measured: the standard deviation
    of the site's activations along the direction over the first ``max_items`` items of
    ``task``'s test split (default: the probe's task), which runs the model unless the
    activation cache holds them. An MLP probe is an error (``NoDirectionError``)."""
    from probebench.causal.effect import _label_sign, _task_of, oriented_direction
    from probebench.models.loading import resolve_model
    from probebench.probe import load_probe
    from probebench.tasks.catalog import TaskCatalog

    probe = load_probe(artifact)
    u = oriented_direction(probe)
    sign = int(_label_sign(probe))
    resolved = resolve_model(probe.model, device=device, progress=False)
    ident = resolved.identity
    gguf_direction_name(probe.site.layer, ident.num_layers)  # refuse before any model runs
    if scale is None:
        task_id = _task_of(probe, task)
        items = TaskCatalog.default().load(task_id).test[:max_items]
        prompts = [p for item in items for p in item.prompts]
        x = probe.activations(prompts, device=device)
        scale = float(np.std(np.asarray(x, dtype=np.float64) @ u, ddof=1))
    if not (scale > 0 and np.isfinite(scale)):
        raise InputError(f"scale must be a positive number; found {scale}")
    vector = SteeringVector(model=probe.model, model_hint=ident.model_type,
                            layer=probe.site.layer, position=probe.site.position,
                            scale=float(scale), sign=sign,
                            direction=u.astype(np.float32),
                            probe=probe.id, bundle_sha256=probe.bundle_sha256)
    return write_steering_vector(vector, Path(out), num_layers=ident.num_layers)
