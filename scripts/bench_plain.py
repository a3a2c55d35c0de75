"""The cold-run baseline: a plain script doing by hand a subset of what `gradviz run` does.

mul_weights (out = x * w) on 200 seeded elements, default (autodiff) and custom backward, in
PyTorch and then TensorFlow, then one matplotlib PNG of the gradients. No gradviz, no numeric
mode. Usage: python scripts/bench_plain.py OUT.png
"""

import os
import sys

import numpy as np

N = 200
rng = np.random.default_rng(0)
xs = rng.standard_normal(N).astype(np.float32)
ws = rng.standard_normal(N).astype(np.float32)
grads = {}

import torch  # noqa: E402


class MulWeights(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g * w, g * x


for mode in ("default", "custom"):
    x = torch.tensor(xs, requires_grad=True)
    w = torch.tensor(ws, requires_grad=True)
    y = MulWeights.apply(x, w) if mode == "custom" else x * w
    y.sum().backward()
    grads[("torch", mode)] = (x.grad.numpy(), w.grad.numpy())

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402


@tf.custom_gradient
def mul_weights(x, w):
    def grad(g):
        return g * w, g * x

    return x * w, grad


for mode in ("default", "custom"):
    x, w = tf.constant(xs), tf.constant(ws)
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = mul_weights(x, w) if mode == "custom" else x * w
        loss = tf.reduce_sum(y)
    gx, gw = tape.gradient(loss, [x, w])
    grads[("tf", mode)] = (gx.numpy(), gw.numpy())

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

fig, axes = plt.subplots(2, 4, figsize=(14, 5), sharex=True)
for col, key in enumerate(grads):
    for row, name in enumerate(("x", "weights")):
        ax = axes[row][col]
        ax.plot(grads[key][row], lw=0.8)
        ax.set_title(f"{key[0]} {key[1]}: d loss / d {name}", fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[1], dpi=100)
