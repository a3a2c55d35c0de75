"""A module that cannot be parsed: a missing closing parenthesis on the marked line."""
import torch


def broken(x:  # FAILS HERE
    return x
