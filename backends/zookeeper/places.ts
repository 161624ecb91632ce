// Where the ZooKeeper clients keep their locks, for whoever must find or remove
// them (the end of an external run, the tests) without loading a client library.

/** A lock's sequential nodes are children of ZK_LOCK_ROOT/<lock key>. */
export const ZK_LOCK_ROOT = "/fencecheck/locks";
