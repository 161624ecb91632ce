"""The fencecheck adapter protocol (docs/adapter-protocol.md), version 1, for Python.

A lock adapter subclasses Adapter and calls run(MyAdapter()). This module owns
standard input and output: it reads one request a line, calls the method named by
the request's type, and writes exactly one reply line for it. Notices (lost,
suspended, reconnected) may be sent from any thread with notice().

Requests are read on a thread of their own and handled one at a time on the main
thread, except `cancel`: it comes while an acquire is blocked in the lock library,
so it is handled at once on the reading thread (Adapter.cancel), and the blocked
acquire then answers for itself (fail "cancelled" or error "cancel-unknown").

Rules it keeps so that adapters need not think about them:
- stdout carries protocol lines only. sys.stdout is pointed at stderr, so a stray
  print() or a library's chatter cannot corrupt the stream (fencecheck would kill
  the program for a line that is not a message).
- One writer at a time: a notice from a library's callback thread and a reply
  from the main thread never interleave within a line.
- An exception a method did not turn into a reply becomes an "error" reply (an
  unknown outcome): it is never safe to guess "fail".
- close and end of input both end the process, even when a library keeps
  non-daemon threads alive (kazoo, grpc).
"""

import json
import logging
import os
import queue
import sys
import threading

PROTOCOL = 1

log = logging.getLogger("fencecheck-adapter")

# The real stdout, kept for protocol lines only; everything else that writes to
# sys.stdout ends up on stderr, which fencecheck copies into the worker's log.
_out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", newline="\n")
sys.stdout = sys.stderr
_out_lock = threading.Lock()


def _write(msg):
    line = json.dumps(msg, separators=(",", ":"))
    with _out_lock:
        _out.write(line + "\n")
        _out.flush()


def notice(msg):
    """Send a notice (a message with no in_reply_to); safe from any thread."""
    try:
        _write(msg)
    except Exception:  # a closed pipe: fencecheck is gone, nothing to tell
        log.exception("could not write notice %r", msg)


class Adapter:
    """Override the request handlers. Each returns the reply's fields (a dict with
    at least "type"); in_reply_to is added here. Raising means "error".

    An acquire goes to the handler of its kind: acquire (a mutex), acquire_rw (a
    read-write lock's "read" or "write" hold), acquire_semaphore (one of `permits`
    permits), reenter (the hold of `owner`, entered again). Declare the kinds you
    offer in `kinds`, in the protocol's words, e.g. {"rw": True, "cancel": True}."""

    fences = False
    renew_mode = "none"
    library = None
    kinds = None

    def init(self, req):
        """Remember the endpoints and options; must not connect (the set-up check
        sends endpoints where nothing listens)."""

    def acquire(self, req):
        raise NotImplementedError

    def acquire_rw(self, req, mode):
        return {"type": "error", "error": "read-write locks not supported"}

    def acquire_semaphore(self, req, permits):
        return {"type": "error", "error": "semaphores not supported"}

    def reenter(self, req, owner):
        return {"type": "error", "error": "re-entry not supported"}

    def cancel(self, acquire_req):
        """Withdraw the acquire `acquire_req`, which is being handled now on the main
        thread (or is about to be: cancelled(acquire_req) is already true). Runs on
        the reading thread; must not block for long. Returns the cancel's reply
        (ok: the library was asked); the acquire's own reply says how it ended."""
        return {"type": "error", "error": "cancel not supported"}

    def renew(self, req):
        return {"type": "error", "error": "renew not supported"}

    def release(self, req):
        raise NotImplementedError

    def close(self):
        pass


def _close_briefly(adapter, seconds=0.5):
    # fencecheck kills a program that has not exited a second after the close
    # reply; a library stuck on a dead link must not make us overstay.
    t = threading.Thread(target=adapter.close, name="adapter-close", daemon=True)
    t.start()
    t.join(seconds)


def _exit(code=0):
    # os._exit: a library's non-daemon threads (kazoo's connection, grpc's
    # poller) would otherwise keep the process alive after close.
    try:
        _out.flush()
    finally:
        sys.stderr.flush()
        os._exit(code)


def cancelled(req):
    """Whether a cancel for this acquire has come (it may come before the acquire
    reaches the lock library: then withdraw it without asking the service)."""
    flag = req.get("_cancel")
    return flag is not None and flag.is_set()


def _acquire(adapter, req):
    mode, reenter, permits = req.get("mode"), req.get("reenter"), req.get("permits")
    if reenter is not None:
        return adapter.reenter(req, reenter)
    if mode is not None:
        return adapter.acquire_rw(req, mode)
    if permits is not None:
        return adapter.acquire_semaphore(req, permits)
    return adapter.acquire(req)


def _handle(adapter, req):
    kind = req.get("type")
    if kind == "init":
        if req.get("protocol") != PROTOCOL:
            # A later version only adds fields we ignore, so carry on; say so in the log.
            log.warning("fencecheck speaks protocol %r, this adapter %d", req.get("protocol"), PROTOCOL)
        adapter.init(req)
        reply = {"type": "init_ok", "fences": adapter.fences, "renew": adapter.renew_mode}
        if adapter.library:
            reply["library"] = adapter.library
        if adapter.kinds:
            reply["kinds"] = adapter.kinds
        return reply
    if kind == "acquire":
        return _acquire(adapter, req)
    if kind == "renew":
        return adapter.renew(req)
    if kind == "release":
        return adapter.release(req)
    return {"type": "error", "error": "unknown request type %r" % (kind,)}


def _short(exc):
    # The error becomes the info completion's `error`: a short phrase, one line.
    text = "%s: %s" % (type(exc).__name__, exc) if str(exc) else type(exc).__name__
    return " ".join(text.split())[:200]


class _Reader:
    """Reads requests on its own thread: every one but cancel is queued for the
    main thread; a cancel is answered here, while the acquire it names blocks."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.requests = queue.Queue()
        self.mu = threading.Lock()
        self.acquires = {}  # id -> acquire request, from when it is read until it is answered

    def take(self):
        return self.requests.get()

    def done(self, req):
        with self.mu:
            self.acquires.pop(req.get("id"), None)

    def read(self):
        stdin = sys.stdin.buffer
        while True:
            raw = stdin.readline()
            if not raw:  # end of input means close
                self.requests.put(None)
                return
            if not raw.strip():
                continue
            try:
                req = json.loads(raw)
                rid = req["id"]
            except (ValueError, KeyError, TypeError):
                # No id to answer to: a reply would itself be a bad line. Log it.
                log.error("ignoring a request that is not a JSON object with an id: %r", raw[:200])
                continue
            if req.get("type") == "cancel":
                _write(dict({"in_reply_to": rid}, **self.cancel(req)))
                continue
            if req.get("type") == "acquire":
                req["_cancel"] = threading.Event()
                with self.mu:
                    self.acquires[rid] = req
            self.requests.put(req)

    def cancel(self, req):
        with self.mu:
            waiting = self.acquires.get(req.get("acquire"))
            if waiting is not None:
                waiting["_cancel"].set()
        if waiting is None:
            # Already answered (the reply crossed the cancel): the acquire's reply stands.
            return {"type": "error", "error": "no such acquire waiting"}
        try:
            return self.adapter.cancel(waiting)
        except Exception as exc:  # noqa: BLE001 - the acquire's reply still says how it ended
            log.exception("cancel of acquire %s raised", req.get("acquire"))
            return {"type": "error", "error": _short(exc)}


def run(adapter):
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("FENCECHECK_LOG_LEVEL", "WARNING"),
                        format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
    reader = _Reader(adapter)
    threading.Thread(target=reader.read, name="requests", daemon=True).start()
    while True:
        req = reader.take()
        if req is None:
            _close_briefly(adapter)
            _exit(0)
        rid = req["id"]
        if req.get("type") == "close":
            _close_briefly(adapter)
            _write({"in_reply_to": rid, "type": "ok"})
            _exit(0)
        try:
            reply = _handle(adapter, req)
        except Exception as exc:  # unknown outcome: never guess fail
            log.exception("%s request %s raised", req.get("type"), rid)
            reply = {"type": "error", "error": _short(exc)}
        finally:
            reader.done(req)
        _write(dict({"in_reply_to": rid}, **reply))
