"""The PyTorch a user would write instead of a vyre op, for tools/bench/ops.py.

Each function takes ``torch``, the op's inputs as CUDA tensors by buffer name (u32 arrays arrive
as int64: torch indexes with int64 and has few uint32 kernels) and the op's builder parameters,
and returns tensors by result buffer name; the benchmark compares each with the same buffer of
ours (its first ``numel()`` elements, loosely: a different order of rounding). Ops on wrapping
u32 arithmetic, bit packing, serial atomics or tiny fixed programs have no equivalent a user
would write: they are left out, and out of the geomean.
"""
from __future__ import annotations

from typing import Any, Callable

Fn = Callable[[Any, dict, dict], dict]
EQUIVALENTS: dict[str, Fn] = {}


def equivalent(*op_ids: str):
    def deco(fn: Fn) -> Fn:
        for op_id in op_ids:
            EQUIVALENTS[op_id] = fn
        return fn
    return deco


def _sdpa(torch, q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v)  # scale 1/sqrt(head_dim), as ours


@equivalent("vyre-libs::math::reduce_variance")
def _reduce_variance(torch, t, p):
    return {"output": torch.var(t["input"], correction=0).reshape(1)}


@equivalent("vyre-libs::nn::attention", "vyre-libs::nn::flash_attention")
def _attention(torch, t, p):
    s, d = p["seq_len"], p["head_dim"]
    q, k, v = (t[n].view(1, s, d) for n in ("q", "k", "v"))
    return {"out": _sdpa(torch, q, k, v).reshape(-1)}


@equivalent("vyre-libs::nn::gqa_attention")
def _gqa(torch, t, p):
    hq, hk, s, d = p["n_q_heads"], p["n_kv_heads"], p["seq_len"], p["head_dim"]
    k = t["k"].view(hk, s, d).repeat_interleave(hq // hk, dim=0)
    v = t["v"].view(hk, s, d).repeat_interleave(hq // hk, dim=0)
    return {"out": _sdpa(torch, t["q"].view(hq, s, d), k, v).reshape(-1)}


@equivalent("vyre-libs::nn::softmax")
def _softmax(torch, t, p):
    return {"output": torch.softmax(t["input"], dim=0)}


@equivalent("vyre-libs::nn::rms_norm")
def _rms_norm(torch, t, p):
    x = t["input"]
    return {"output": x * torch.rsqrt(x.square().mean() + p["eps"])}


@equivalent("vyre-libs::nn::layer_norm")
def _layer_norm(torch, t, p):
    x = t["input"]
    return {"output": torch.nn.functional.layer_norm(x, x.shape, eps=p["eps"])}


@equivalent("vyre-libs::nn::cross_entropy")
def _cross_entropy(torch, t, p):
    logits = t["logits"].view(p["n"], p["vocab_size"])
    return {"loss": torch.nn.functional.cross_entropy(logits, t["targets"], reduction="none")}


@equivalent("vyre-libs::nn::mlp_backward")
def _mlp_backward(torch, t, p):
    d, h = p["model_dim"], p["hidden_dim"]
    w1, w2 = t["w1"].view(d, h), t["w2"].view(h, d)
    hid = t["b1"] + t["x"] @ w1
    return {"grad_x": w1 @ ((w2 @ t["grad_out"]) * torch.maximum(0.5 * hid, 2.0 * hid))}


def _linear(t, p):
    return t["x"] @ t["w"].view(p["in_dim"], p["out_dim"]) + t["b"]


@equivalent("vyre-libs::nn::linear_relu")
def _linear_relu(torch, t, p):
    return {"out": torch.relu(_linear(t, p))}


@equivalent("vyre-libs::nn::linear_silu")
def _linear_silu(torch, t, p):
    return {"out": torch.nn.functional.silu(_linear(t, p))}


@equivalent("vyre-libs::nn::rms_norm_linear")
def _rms_norm_linear(torch, t, p):
    x = t["input"]
    s = torch.rsqrt(x[:p["n"]].square().mean() + p["eps"])
    return {"out": (x * s) @ t["w"].view(p["in_dim"], p["out_dim"]) + t["b"]}


def _leaky_sq(torch, x):
    return torch.nn.functional.leaky_relu(x, 0.5).square()


@equivalent("vyre-libs::nn::mlp_4x_leaky_sq")
def _mlp_4x(torch, t, p):
    d, h = p["model_dim"], p["hidden_dim"]
    act = _leaky_sq(torch, t["b1"] + t["x"] @ t["w1"].view(d, h))
    return {"out": t["b2"] + act @ t["w2"].view(h, d)}


@equivalent("vyre-libs::nn::gelu")
def _gelu(torch, t, p):
    return {"output": torch.nn.functional.gelu(t["input"], approximate="tanh")}


@equivalent("vyre-libs::nn::silu")
def _silu(torch, t, p):
    return {"output": torch.nn.functional.silu(t["input"])}


@equivalent("vyre-libs::nn::swiglu")
def _swiglu(torch, t, p):
    return {"output": torch.nn.functional.silu(t["gate"]) * t["up"]}


@equivalent("vyre-libs::nn::leaky_relu_sq")
def _leaky_relu_sq(torch, t, p):
    return {"output": _leaky_sq(torch, t["input"])}


@equivalent("vyre-libs::nn::logit_softcap")
def _softcap(torch, t, p):
    return {"output": torch.tanh(t["input"] / p["cap"]) * p["cap"]}


@equivalent("vyre-libs::nn::skip_gate")
def _skip_gate(torch, t, p):
    return {"output": torch.lerp(t["skip"], t["branch"], torch.sigmoid(t["gate"]))}


@equivalent("vyre-libs::nn::parallel_residual_block")
def _residual(torch, t, p):
    return {"out": t["x"] + t["attn"] + t["mlp"]}


@equivalent("vyre-libs::nn::layerwise_ln_scale")
def _ln_scale(torch, t, p):
    return {"output": t["input"] * t["scale"]}


@equivalent("vyre-libs::nn::qk_gain")
def _qk_gain(torch, t, p):
    return {"q_out": (t["q_in"].view(p["num_heads"], -1) * t["gain"][:, None]).reshape(-1)}


@equivalent("vyre-libs::nn::embedding")
def _embedding(torch, t, p):
    table = t["table"].view(-1, p["embed_dim"])
    return {"output": torch.nn.functional.embedding(t["tokens"], table).reshape(-1)}


@equivalent("vyre-libs::nn::partial_rope")
def _rope(torch, t, p):
    h, s, d, r = p["num_heads"], p["seq_len"], p["head_dim"], p["rope_dims"]
    x = t["input"].view(h, s, d)
    c, sn = t["cos"].view(1, s, r // 2), t["sin"].view(1, s, r // 2)
    e, o = x[..., 0:r:2], x[..., 1:r:2]
    rot = torch.stack([e * c - o * sn, e * sn + o * c], dim=-1).flatten(-2)
    return {"output": torch.cat([rot, x[..., r:]], dim=-1).reshape(-1)}


@equivalent("vyre-libs::nn::top_k")
def _top_k(torch, t, p):
    return {"output": torch.topk(t["input"], p["k"]).indices}


@equivalent("vyre-libs::math::conv::conv2d_3x3_direct")
def _conv(torch, t, p):
    img = t["input"].view(1, 1, p["h"], p["w"])
    return {"output": torch.nn.functional.conv2d(img, t["kernel"].view(1, 1, 3, 3), padding=1).reshape(-1)}


@equivalent("vyre-libs::math::conv::im2col_3x3")
def _im2col(torch, t, p):
    img = t["input"].view(1, 1, p["h"], p["w"])
    return {"output": torch.nn.functional.unfold(img, 3, padding=1)[0].t().reshape(-1)}


@equivalent("vyre-libs::optim::ema_apply")
def _ema(torch, t, p):
    return {"ema": torch.lerp(t["theta"], t["ema"], p["decay"])}


@equivalent("vyre-libs::optim::newton_schulz_5step")
def _newton_schulz(torch, t, p):
    x = t["mat"]
    for _ in range(5):
        x2 = x * x
        x = 3.4445 * x - 4.775 * (x2 * x) + 2.0315 * (x2 * x2 * x)
    return {"output": x}


def relative_error(torch, ours, theirs) -> float:
    """max |ours - theirs| over max |theirs| (both flattened; ours cut to theirs' length)."""
    a = torch.as_tensor(ours).reshape(-1)[: theirs.numel()].to(theirs.device, torch.float64)
    b = theirs.reshape(-1).to(torch.float64)
    scale = float(b.abs().max()) if b.numel() else 0.0
    return float((a - b).abs().max()) / (scale or 1.0) if b.numel() else 0.0


__all__ = ["EQUIVALENTS", "equivalent", "relative_error"]
