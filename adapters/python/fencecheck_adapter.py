"""The fencecheck adapter protocol (docs/adapter-protocol.md), version 1, for Python.

A lock adapter subclasses Adapter and calls run(MyAdapter()). This module owns
standard input and output: it reads one request a line, calls the method named by
the request's type, and writes exactly one reply line for it. Notices (lost,
suspended, reconnected) may be sent from any thread with notice().

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


DEBIAN_DIST_PACKAGES = "/usr/lib/python3/dist-packages"


def find_debian_packages(*modules):
    """Make apt's python3-* packages importable when `python3` on PATH is another
    interpreter (pyenv, a virtualenv) that does not see Debian's dist-packages.

    The reference adapters use Debian's packages (apt-get install python3-redis
    ...); the manifest runs `python3` from PATH. Only when a module is missing is
    Debian's directory appended (last, so the interpreter's own packages win)."""
    import importlib.util
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing and os.path.isdir(DEBIAN_DIST_PACKAGES) and DEBIAN_DIST_PACKAGES not in sys.path:
        sys.path.append(DEBIAN_DIST_PACKAGES)
        log.info("%s not found on %s's path: using %s", ", ".join(missing), sys.executable, DEBIAN_DIST_PACKAGES)


class Adapter:
    """Override the request handlers. Each returns the reply's fields (a dict with
    at least "type"); in_reply_to is added here. Raising means "error"."""

    fences = False
    renew_mode = "none"
    library = None

    def init(self, req):
        """Remember the endpoints and options; must not connect (the set-up check
        sends endpoints where nothing listens)."""

    def acquire(self, req):
        raise NotImplementedError

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
        return reply
    if kind == "acquire":
        return adapter.acquire(req)
    if kind == "renew":
        return adapter.renew(req)
    if kind == "release":
        return adapter.release(req)
    return {"type": "error", "error": "unknown request type %r" % (kind,)}


def _short(exc):
    # The error becomes the info completion's `error`: a short phrase, one line.
    text = "%s: %s" % (type(exc).__name__, exc) if str(exc) else type(exc).__name__
    return " ".join(text.split())[:200]


def run(adapter):
    logging.basicConfig(stream=sys.stderr, level=os.environ.get("FENCECHECK_LOG_LEVEL", "WARNING"),
                        format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
    stdin = sys.stdin.buffer
    while True:
        raw = stdin.readline()
        if not raw:  # end of input means close
            _close_briefly(adapter)
            _exit(0)
        if not raw.strip():
            continue
        try:
            req = json.loads(raw)
            rid = req["id"]
        except (ValueError, KeyError, TypeError):
            # No id to answer to: a reply would itself be a bad line. Log it.
            log.error("ignoring a request that is not a JSON object with an id: %r", raw[:200])
            continue
        if req.get("type") == "close":
            _close_briefly(adapter)
            _write({"in_reply_to": rid, "type": "ok"})
            _exit(0)
        try:
            reply = _handle(adapter, req)
        except Exception as exc:  # unknown outcome: never guess fail
            log.exception("%s request %s raised", req.get("type"), rid)
            reply = {"type": "error", "error": _short(exc)}
        _write(dict({"in_reply_to": rid}, **reply))
