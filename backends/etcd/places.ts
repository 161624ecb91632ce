// Where each etcd client keeps its locks: the key ranges a run's locks live under,
// for whoever must find or remove them (the end of an external run, the tests)
// without loading the client's library.

/** etcd-queue (and etcd-queue-cancel-delete): a waiter's key is QUEUE_PREFIX/<lock key>/<lease>. */
export const QUEUE_PREFIX = "fencecheck/queue";
/** etcd-rw: a reader's key is RW_PREFIX/<lock key>/read/<lease>, a writer's RW_PREFIX/<lock key>/write/<lease>. */
export const RW_PREFIX = "fencecheck/rw";
/** etcd3-lock: the etcd3 package's lock key, LOCK_PREFIX/<lock key>. */
export const LOCK_PREFIX = "fencecheck/etcd3-lock";

/** etcd-mutex-go (adapters/go/etcdmutex): Go's concurrency.Mutex, a holder's or waiter's key MUTEX_PREFIX/<lock key>/<lease>. */
export const MUTEX_PREFIX = "/fencecheck/locks";
/** python-etcd3 (adapters/python/etcd3_lock.py): the library puts its own "/locks/" before the adapter's lock name. */
export const PYTHON_ETCD3_PREFIX = "/locks/fencecheck/python-etcd3";

/** Where the etcd clients keep a key's lock: what a run with keys under `keyPrefix` leaves, if anything. */
export const etcdKeyRanges = (keyPrefix: string): string[] =>
  [QUEUE_PREFIX, RW_PREFIX, LOCK_PREFIX, MUTEX_PREFIX, PYTHON_ETCD3_PREFIX].map((p) => `${p}/${keyPrefix}`);
