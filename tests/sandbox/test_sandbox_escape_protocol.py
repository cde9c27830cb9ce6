"""Escape suite, case 22: a hostile worker speaking the protocol itself (user code owns the
worker process, so it can write any bytes to the channel). The supervisor must kill and
respawn the worker on each violation, never crash and never misroute a later result."""

from __future__ import annotations

import pytest

from .conftest import Host, run_attack

_FORGE = """
    import os, sys, json, struct
    OUT = int(sys.argv[2])
    worker = [c.cell_contents for c in ping.__closure__
              if type(c.cell_contents).__name__ == "Worker"][0]
    EID = worker.exec_id
    def encode(obj):
        body = json.dumps(obj).encode()
        return struct.pack(">I", len(body)) + body
    def frame(*objs):  # one write of < PIPE_BUF bytes: the host reads the frames together
        os.write(OUT, b"".join(encode(o) for o in objs))
"""

_ATTACKS = {
    "wrong_id": 'frame({"t": "result", "id": EID + 7, "ok": True, "value": "forged", '
                '"error": None, "threads": 1})',
    "huge_frame": 'os.write(OUT, struct.pack(">I", 2**30) + b"{")',
    "invalid_json": 'os.write(OUT, struct.pack(">I", 5) + b"{{{{{")',
    "not_object": 'frame([1, 2, 3])',
    "unknown_function": 'frame({"t": "call", "id": EID, "fn": "os_system", "args": [], '
                        '"kwargs": {}})',
    "extra_keys": 'frame({"t": "call", "id": EID, "fn": "ping", "args": [], "kwargs": {}, '
                  '"x": 1})',
    "call_after_result": 'frame({"t": "result", "id": EID, "ok": True, "value": "forged", '
                         '"error": None, "threads": 1}, '
                         '{"t": "call", "id": EID, "fn": "ping", "args": [1], "kwargs": {}})',
    "unknown_type": 'frame({"t": "ready", "guards": []})',
    "nan": 'os.write(OUT, struct.pack(">I", 3) + b"NaN")',
}


@pytest.mark.parametrize("attack", sorted(_ATTACKS))
def test_case22_hostile_worker_frames(host: Host, attack: str) -> None:
    res = run_attack(host, _FORGE + "    " + _ATTACKS[attack] + "\n    import time\n"
                     "    time.sleep(30)\n")
    assert res.error is not None and res.error.type == "ProtocolViolation", res.to_json()
    assert res.state_lost and res.value != "'forged'"


@pytest.mark.parametrize("calls", [1, 2, 5])
def test_a_call_from_a_thread_left_running_read_with_the_result_keeps_the_value(
        host: Host, calls: int) -> None:
    """A thread the cell left running may call the host just as the cell's result goes out, the
    two frames then read together (SBX7, session 32): the cell lost its value to
    `ProtocolViolation: frame after the result`, or kept it with `ThreadsLeftRunning`, by a
    race. The result says threads are left, so the calls are not served and the cell gets the
    latter either way; the worker is restarted."""
    call = '{"t": "call", "id": EID, "fn": "ping", "args": [1], "kwargs": {}}'
    res = run_attack(host, _FORGE + '    frame({"t": "result", "id": EID, "ok": True, '
                     '"value": "kept", "error": None, "threads": 2}, '
                     + ", ".join([call] * calls) + ")\n    import time\n    time.sleep(30)\n")
    assert res.error is not None and res.error.type == "ThreadsLeftRunning", res.to_json()
    assert res.value == "kept" and res.state_lost


def test_case22_frame_flood(host: Host) -> None:
    res = run_attack(host, _FORGE + """
    for i in range(20000):
        frame({"t": "call", "id": EID, "fn": "ping", "args": [i], "kwargs": {}})
    """, deadline_s=1.0)
    assert res.error is not None and res.state_lost
    assert res.error.type in ("DeadlineExceeded", "ProtocolViolation")


def test_case22_frame_between_execs(host: Host) -> None:
    """A frame written by a thread after its cell ended is caught before the next exec."""
    first = host.sb.exec(host.code(_FORGE + """
    import threading, time
    def late():
        time.sleep(0.3)
        frame({"t": "call", "id": EID, "fn": "ping", "args": [1], "kwargs": {}})
    threading.Thread(target=late, daemon=True).start()
    """))
    # The thread outlived the cell: the worker is replaced right away, so the late frame has
    # no reader; the next exec runs on a fresh worker.
    assert first.state_lost
    res = run_attack(host, "ping(5)")
    assert res.ok and res.value == "5"


_CLOSE = {  # the worker lives on after closing its end of the channel
    "out": "os.close(OUT)",
    "in": "os.close(int(sys.argv[1]))\n    try:\n        ping(1)\n    except OSError:\n"
          "        pass",
}


@pytest.mark.parametrize("end", sorted(_CLOSE))
def test_case22_a_worker_that_closes_its_channel_ends_at_the_deadline(host: Host,
                                                                      end: str) -> None:
    # The host took the channel's end for the worker's death and waited for it to exit,
    # without a limit: the cell answered only when the worker chose to (60 s past a 3 s
    # deadline through rmh serve; never, for a worker sleeping on).
    res = run_attack(host, _FORGE + "    " + _CLOSE[end] + "\n    import time\n"
                     "    time.sleep(30)\n", deadline_s=3.0)
    assert res.error is not None and res.state_lost, res.to_json()
    assert res.error.type in ("ProtocolViolation", "DeadlineExceeded"), res.to_json()
    assert res.duration_s < 5.0, res.to_json()
