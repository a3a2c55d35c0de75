"""A torch Function whose backward returns two gradients for its one input.

torch raises in the backward pass: "RuntimeError: function WrongGradCountBackward returned an
incorrect number of gradients (expected 1, got 2)". torch reports it from its own C++ code;
the user's line that causes it is the marked return.
"""
import torch


class WrongGradCount(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * 2, grad_output  # FAILS HERE
