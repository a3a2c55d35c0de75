"""A layer owning a parameter "bias" of shape (200,), computing x + bias via a custom Function.

Same parameter name and op names as layer_with_params_tf.py, so both get the same seeded bias.
Expected with upstream ones: out = x + bias; dL/dx = ones; dL/dbias = ones (all modes match).
"""
import torch
from torch import nn

import gradviz


@gradviz.op(name="add_bias")
class AddBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias):
        return x + bias

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output


@gradviz.op(name="bias_layer")
class BiasLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(200))

    def forward(self, x):
        return AddBias.apply(x, self.bias)
