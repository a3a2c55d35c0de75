"""Big arrays cross from worker to parent through shared memory files, and leave none behind."""
import glob
import os
import socket
from multiprocessing.connection import Connection

import numpy as np

from gradviz.engine import transport


def pair():
    a, b = socket.socketpair()
    return Connection(a.detach()), Connection(b.detach())


def leftovers():
    return glob.glob(transport._prefix(os.getpid()) + "*")


def test_round_trip_small_big_and_shared_objects():
    left, right = pair()
    big = np.arange(transport.BIG // 8 * 3, dtype=np.float64)
    msg = ("ok", {"small": np.ones(3), "big": big, "again": big, "nan": np.array([np.nan] * 300000)})
    transport.send(left, msg)
    status, value = transport.recv(right)
    assert status == "ok"
    np.testing.assert_array_equal(value["small"], np.ones(3))
    np.testing.assert_array_equal(value["big"], big)
    assert value["again"] is value["big"]                # one file for one array object
    assert np.isnan(value["nan"]).all()
    value["big"][0] = -1.0                                # copy-on-write: writable, file untouched
    assert value["big"][0] == -1.0 and big[0] == 0.0
    assert leftovers() == []


def test_files_of_a_dead_worker_are_discarded():
    left, right = pair()
    transport.send(left, np.zeros(transport.BIG))        # never received
    assert len(leftovers()) == 1
    transport.discard_leftovers(os.getpid())
    assert leftovers() == []
