"""The cold-run bench's mixed file: a torch op and its TF twin in one file (the seed tutorial's
shape), so each worker imports this file and with it both frameworks. Paired by name."""

import tensorflow as tf
import torch

import gradviz


@gradviz.op(name="mul_weights")
class MulWeights(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weights):
        ctx.save_for_backward(x, weights)
        return x * weights

    @staticmethod
    def backward(ctx, grad_output):
        x, weights = ctx.saved_tensors
        return grad_output * weights, grad_output * x


@gradviz.op(name="mul_weights")
@tf.custom_gradient
def mul_weights(x, weights):
    def grad(upstream):
        return upstream * weights, upstream * x

    return x * weights, grad
