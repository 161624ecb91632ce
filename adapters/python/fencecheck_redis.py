"""What fencecheck's Redis adapter programs share (redis-py, python-redis-lock, pottery).

A client that sends each command once, and a way to know a refused connection
preceded any command. redis-py 8 retries a command up to 10 times on a
connection error or a timeout, whatever retry_on_timeout says: a SET NX that
landed and whose reply was lost would be sent again, find the key taken and
read as a definite "busy" while its own token holds the key. The protocol
forbids such a guess, so every client here has no retries.
"""

import redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry


def once_client(endpoint, socket_timeout_s, connect_timeout_s=None):
    """A redis.Redis to one endpoint that sends each command once; it connects lazily, at its first command."""
    return redis.Redis(host=endpoint["host"], port=endpoint["port"],
                       socket_timeout=socket_timeout_s,
                       socket_connect_timeout=connect_timeout_s if connect_timeout_s is not None else socket_timeout_s,
                       retry=Retry(NoBackoff(), 0))


def connect_first(r):
    """Connect a pooled connection now, so that a refusal is known to precede any command.

    Returns None when connected, or the fail reply. The pool's get_connection
    connects (and checks the socket is clean); the library's next command then
    takes this same idle connection."""
    pool = r.connection_pool
    try:
        conn = pool.get_connection()
    except (RedisConnectionError, RedisTimeoutError) as exc:
        # The TCP connection (or its handshake) failed: no command was written.
        return {"type": "fail", "error": "conn-refused", "detail": str(exc)}
    pool.release(conn)
    return None
