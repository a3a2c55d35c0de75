"""What a TensorFlow custom_gradient `grad` function returns, checked where it returns.

TF passes a grad's return value on unchecked: a Python float or a numpy array comes out of
`tape.gradient` as itself (or breaks TF's aggregation later), and gradviz's own `.numpy()` failed
at the decorator line. While a gradient is taken, a profile hook (this thread only) watches the
functions that TF's custom_gradient wrapper calls; the first one that returns something other
than tensors (and None) is named, with the user's `return` line, instead of what follows.
"""

from __future__ import annotations

import contextlib
import sys
import traceback

from gradviz.errors import GradvizError
from gradviz.user_frames import is_user_frame

# TF's wrappers that call the user's grad: eager (actual_grad_fn) and graph mode (tape_grad_fn).
_CALLERS = {"actual_grad_fn", "tape_grad_fn"}
_CALLER_FILE = "custom_gradient.py"
# is_user_frame by file name: the hook sees ~1800 returns per gradient of even a small op, and
# working the path out each time took a third of a small TF run
_user_files: dict[str, bool] = {}


class GradReturnedNonTensor(GradvizError, TypeError):
    """A grad function returned a non-tensor; `user_frames` holds its return line (for
    user_code.error_info, since that frame has returned before the error is raised)."""

    def __init__(self, message: str, where: str, function: str):
        super().__init__(message)
        path, _, line = where.rpartition(":")
        self.user_frames = [traceback.FrameSummary(path, int(line), function)] if path else []


def _first_non_tensor(value, is_tensor):
    """The first leaf of `value` (nested lists/tuples) that is neither a tensor nor None."""
    if isinstance(value, (list, tuple)):
        for item in value:
            bad = _first_non_tensor(item, is_tensor)
            if bad is not None:
                return bad
        return None
    return None if value is None or is_tensor(value) else value


@contextlib.contextmanager
def grad_returns_checked():
    """Raise GradReturnedNonTensor, at the user's return line, for the first grad function that
    returned a non-tensor while the block ran (also when the block itself failed because of it)."""
    import tensorflow as tf

    def is_tensor(x) -> bool:
        return tf.is_tensor(x) or isinstance(x, (tf.IndexedSlices, tf.Variable))

    found: list = []  # (type name, where, function) of the first bad return
    last_user: list = [None, "", ""]  # the value, file:line and name of the last user return

    def hook(frame, event, arg):
        if event != "return" or found:
            return
        code = frame.f_code
        user = _user_files.get(code.co_filename)
        if user is None:
            user = _user_files[code.co_filename] = is_user_frame(code.co_filename)
        if user:
            last_user[:] = [arg, f"{code.co_filename}:{frame.f_lineno}", code.co_name]
        caller = frame.f_back
        if (
            caller is None
            or caller.f_code.co_name not in _CALLERS
            or not caller.f_code.co_filename.endswith(_CALLER_FILE)
        ):
            return
        bad = _first_non_tensor(arg, is_tensor)
        if bad is None:
            return
        # the user's grad, or a wrapper around it (keras.ops.custom_gradient): the user's last
        # return handed up the value
        user = last_user if last_user[0] is arg or _contains(last_user[0], bad) else [None, "", ""]
        found.append((type(bad).__name__, user[1], user[2]))

    previous = sys.getprofile()
    sys.setprofile(hook)
    try:
        yield
    except Exception as exc:
        if found:
            raise _error(*found[0]) from exc
        raise
    finally:
        sys.setprofile(previous)
    if found:
        raise _error(*found[0])


def _contains(value, leaf) -> bool:
    if value is leaf:
        return True
    return isinstance(value, (list, tuple)) and any(_contains(v, leaf) for v in value)


def _error(type_name: str, where: str, function: str) -> GradReturnedNonTensor:
    return GradReturnedNonTensor(
        f"grad returned {type_name}; return a tensor (a tf op's result, or "
        f"tf.convert_to_tensor(...)) for each input",
        where,
        function,
    )
