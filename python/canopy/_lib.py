"""Loading libcanopy.so, the fork check, errors and the calling convention.

The shared library is Canopy's Go code built with -buildmode=c-shared
(python/libcanopy). Every entry point takes integer handles and reports
errors as a "Kind: message" C string that becomes the Python exception
Kind. Every array the library reads or writes is a numpy array this
package allocated and keeps alive for the object's lifetime (see
pyapi/doc.go), so nothing the library hands out can dangle.
"""
import atexit
import ctypes
import json
import os
import threading
import weakref

import numpy as np

_FORK_MESSAGE = (
    "Canopy's Go runtime does not survive fork(); create Canopy objects in the child / "
    "use the 'spawn' start method (multiprocessing.set_start_method('spawn'), or "
    "DataLoader(..., multiprocessing_context='spawn'))")

_EXC = {"ValueError": ValueError, "KeyError": KeyError, "RuntimeError": RuntimeError,
        "TypeError": TypeError, "IndexError": IndexError}

# Events of wait (pyapi.WaitDone etc.).
WAIT_TIMEOUT, WAIT_DATA, WAIT_DONE = 0, -2, -3

_state = {"lib": None, "pid": None}
_load_lock = threading.Lock()
_live = weakref.WeakSet()  # open Handle objects, closed at exit


def _path():
    p = os.environ.get("CANOPY_LIB")
    if p:
        return p
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libcanopy.so")


def _load():
    p = _path()
    if not os.path.exists(p):
        raise ImportError(
            f"canopy: the shared library {p} is missing: build it with `make python` "
            "(go build -buildmode=c-shared -o python/canopy/libcanopy.so ./python/libcanopy), "
            "or point CANOPY_LIB at it")
    lib = ctypes.CDLL(p)
    c_ll, c_p, c_cp = ctypes.c_longlong, ctypes.c_void_p, ctypes.c_char_p
    errp = ctypes.POINTER(ctypes.c_void_p)
    lib.canopy_free.argtypes = [c_p]
    lib.canopy_free.restype = None
    lib.canopy_call.argtypes = [c_cp, c_ll, errp]
    lib.canopy_call.restype = c_p
    lib.canopy_open.argtypes = [c_cp, c_ll, ctypes.POINTER(c_p), ctypes.POINTER(c_ll), c_ll, errp, errp]
    lib.canopy_open.restype = c_ll
    lib.canopy_step.argtypes = [c_ll, errp]
    lib.canopy_step.restype = ctypes.c_int
    lib.canopy_wait.argtypes = [c_ll, c_ll, errp]
    lib.canopy_wait.restype = c_ll
    lib.canopy_submit.argtypes = [c_ll, errp]
    lib.canopy_submit.restype = ctypes.c_int
    lib.canopy_exchange.argtypes = [c_ll, c_cp, c_cp, c_ll, ctypes.POINTER(c_p), ctypes.POINTER(c_ll), c_ll, errp]
    lib.canopy_exchange.restype = c_p
    lib.canopy_close_all.argtypes = []
    lib.canopy_close_all.restype = None
    return lib


def lib():
    """The loaded library; RuntimeError in a forked child."""
    st = _state
    if st["lib"] is None:
        with _load_lock:
            if st["lib"] is None:
                st["lib"] = _load()
                st["pid"] = os.getpid()
    if os.getpid() != st["pid"]:
        raise RuntimeError(_FORK_MESSAGE)
    return st["lib"]


def _take_string(p):
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib().canopy_free(p)


def raise_error(errv):
    msg = _take_string(errv.value)
    if msg is None:
        raise RuntimeError("canopy: the library failed without a message")
    kind, _, text = msg.partition(": ")
    exc = _EXC.get(kind)
    if exc is None:
        raise RuntimeError(msg)
    raise exc(text)


def _bufs(arrays):
    n = len(arrays)
    ptrs = (ctypes.c_void_p * max(n, 1))()
    lens = (ctypes.c_longlong * max(n, 1))()
    for i, a in enumerate(arrays):
        if not a.flags.c_contiguous or not a.flags.writeable:
            raise ValueError("canopy: internal buffer is not a writable C-contiguous array")
        ptrs[i] = a.ctypes.data if a.nbytes else None
        lens[i] = a.nbytes
    return ptrs, lens, n


def call(method, handle=0, **args):
    """A control call (JSON in, JSON out)."""
    L = lib()
    req = json.dumps({"method": method, "handle": handle, "args": args}).encode()
    err = ctypes.c_void_p()
    out = L.canopy_call(req, len(req), ctypes.byref(err))
    if err.value:
        raise_error(err)
    s = _take_string(out)
    return None if s is None else json.loads(s)


def open_handle(kind, args, arrays):
    """Opens a library object on arrays; returns (handle, info)."""
    L = lib()
    req = json.dumps({"method": kind, "args": args}).encode()
    ptrs, lens, n = _bufs(arrays)
    info, err = ctypes.c_void_p(), ctypes.c_void_p()
    h = L.canopy_open(req, len(req), ptrs, lens, n, ctypes.byref(info), ctypes.byref(err))
    if err.value:
        raise_error(err)
    return h, json.loads(_take_string(info.value))


class Handle:
    """An open library object: closed once (close() is idempotent), at
    garbage collection or at interpreter exit. Calls on one handle are
    serialised by a lock; after close() they raise RuntimeError."""

    def __init__(self, kind, args, arrays):
        self.h = None
        self._lock = threading.RLock()
        self._arrays = arrays  # kept alive while Go may write them
        self.h, self.info = open_handle(kind, args, arrays)
        self._kind = kind
        _live.add(self)

    def _check(self, what):
        if self.h is None:
            raise RuntimeError(f"canopy: {what} after close(): create a new {self._kind} object")
        return lib()

    def call(self, method, **args):
        with self._lock:
            self._check(method)
            return call(method, self.h, **args)

    def step(self):
        with self._lock:
            L = self._check("step")
            err = ctypes.c_void_p()
            if L.canopy_step(self.h, ctypes.byref(err)) != 0 or err.value:
                raise_error(err)

    def wait(self, timeout_ms=100):
        with self._lock:
            L = self._check("wait")
            err = ctypes.c_void_p()
            ev = L.canopy_wait(self.h, timeout_ms, ctypes.byref(err))
            if err.value:
                raise_error(err)
            return ev

    def submit(self):
        with self._lock:
            L = self._check("submit")
            err = ctypes.c_void_p()
            if L.canopy_submit(self.h, ctypes.byref(err)) != 0 or err.value:
                raise_error(err)

    def exchange(self, op, arrays, **args):
        with self._lock:
            L = self._check(op)
            a = json.dumps(args).encode()
            ptrs, lens, n = _bufs(arrays)
            err = ctypes.c_void_p()
            out = L.canopy_exchange(self.h, op.encode(), a, len(a), ptrs, lens, n, ctypes.byref(err))
            if err.value:
                raise_error(err)
            s = _take_string(out)
            return None if s is None else json.loads(s)

    @property
    def closed(self):
        return self.h is None

    def close(self):
        if self.h is None:
            return
        if _state["pid"] != os.getpid():
            self.h = None  # a forked child's copy: the parent owns it
            return
        with self._lock:
            if self.h is None:
                return
            h, self.h = self.h, None
            _live.discard(self)
            call("close", h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def live_handles():
    """The number of objects open in the library (tests: nothing leaks)."""
    return call("live")["handles"]


@atexit.register
def _close_all():
    if _state["lib"] is None or _state["pid"] != os.getpid():
        return
    for h in list(_live):
        try:
            h.close()
        except Exception:
            pass
    _state["lib"].canopy_close_all()


def as_f32(x, name, shape):
    """x (numpy, torch, list) as a float32 array of shape, or ValueError
    naming the argument."""
    if hasattr(x, "detach"):  # torch
        x = x.detach().cpu().numpy()
    a = np.asarray(x)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"{name} has dtype {a.dtype}, want a float array (float32)")
    if a.shape != tuple(shape):
        if a.size == int(np.prod(shape)) and a.ndim >= 1 and a.shape[0] == shape[0]:
            a = a.reshape(shape)
        else:
            raise ValueError(f"{name} has shape {a.shape}, want {tuple(shape)}")
    return a
