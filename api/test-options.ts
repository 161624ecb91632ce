// The options of `fencecheck test` as the API takes them, by their camelCase
// names (timeLimit is --time-limit), each with the command's own help. Written
// out so that an editor completes them; test/api/options.test.ts holds this
// interface to runner/options.ts TEST_OPTIONS, the one description of each option.

export interface TestOptions {
  /** lock service to test (default: redis) */
  backend?: "redis" | "redlock" | "etcd" | "zookeeper" | "postgres" | "dynamodb" | "lockserver";
  /** lock client: redis, redis-unsafe-release, redis-blind-renew, node-redlock, node-redlock-4, sesame-redlock, redlock, redis-semaphore, simple-redis-mutex, etcd-queue, etcd3-lock, zookeeper, zookeeper-naive, postgres-lease, postgres-advisory, dynamodb-cas, dynamodb-rvn, dynamodb-lock-client, or the path of an adapter module of your own (./my-lock.ts; see examples/redis-lock-adapter.ts) (default: the backend's own) */
  client?: string;
  /** what clients do (default: fenced-write) */
  workload?: "fenced-write" | "counter";
  /** the kind of lock: mutex, reentrant (a hold re-enters to a random depth and releases back down), rw (readers share, a writer excludes) or semaphore:N (N holders at once) (default: mutex) */
  lock?: "mutex" | "reentrant" | "rw" | `semaphore:${number}`;
  /** --lock rw: the share of acquires that ask to read (default: 0.5) */
  readRatio?: number;
  /** --lock reentrant: the deepest re-entry of a hold (each hold goes to a random depth from 1 to this) (default: 3) */
  maxDepth?: number;
  /** the share of waiting acquires withdrawn before their timeout (the client must be able to cancel a wait) (default: 0) */
  cancelRate?: number;
  /** strict: a stuck-lock finding (waiters, and no hold, for longer than the TTL plus the command timeout) makes the run invalid (default: lenient) */
  liveness?: "lenient" | "strict";
  /** faults to inject, comma-separated, or none (default: pause) */
  nemesis?: string | Array<"pause" | "pause-server" | "partition" | "latency" | "clock" | "kill" | "none">;
  /** the resource refuses writes with a stale fencing token (default: true) */
  fence?: boolean | "on" | "off";
  /** redlock and lockserver-majority: where a hold's fence comes from: none; the largest of the granting majority's counters (Redlock: INCR on each; the lock servers: each grant's fence; unsafe, F2); one counter alone, on redis-1 or lockserver-1 (a single point of failure) (default: max-incr) */
  fenceSource?: "none" | "max-incr" | "single";
  /** --client redis-unsafe-release: ms between its GET and its DEL (lands T1 on demand) (default: 0) */
  releaseGap?: number;
  /** --client redlock refuses a quorum that came back after the lease's validity (off: node-redlock 5's defect, K5) (default: on) */
  redlockCheckValidity?: boolean | "on" | "off";
  /** where the protected resource keeps each key's value and fence, and so who decides a write: its own memory, a Postgres of its own (one conditional UPDATE ... WHERE fence < $1 per write), or a dynalite of its own (one conditional UpdateItem per write) (default: memory) */
  resource?: "memory" | "postgres" | "dynamodb";
  /** reads carry the hold's fence and advance the resource's fence too (counter; closes C1) (default: false) */
  fenceReads?: boolean;
  /** seconds of operations before the final heal (default: 30) */
  timeLimit?: number;
  /** logical clients in all (default: 6) */
  concurrency?: number;
  /** worker processes the clients are spread over (default: 2) */
  workers?: number;
  /** acquire attempts per second per client (open model; a client busy past its next attempt makes one when free, with no catch-up burst) (default: 10) */
  rate?: number;
  /** keys the clients spread over (1: one hot key) (default: 1) */
  keys?: number;
  /** lease TTL in ms (default: 1000) */
  ttl?: number;
  /** ms to keep trying for the lock before the acquire fails (default: 2000) */
  acquireTimeout?: number;
  /** ms of work while holding, before the writes (default: 100) */
  work?: number;
  /** ms each holder pauses, after acquiring unless --pause-at says otherwise (a simulated GC pause) (default: 0) */
  pause?: number;
  /** client ids that take --pause, e.g. 0,2 (default: all) */
  pauseClients?: string | Array<string | number>;
  /** where --pause is taken: after acquiring, between the read and the write (counter), inside a Redlock acquire between the node replies and the decision (--client redlock, K5), after each re-entry is granted (--lock reentrant, before that depth's work and write: R2), or just before the hold's release (after a reentrant hold's inner releases, as the outer block's own work after its inner block returns: R1) (default: acquire) */
  pauseAt?: "acquire" | "read" | "replies" | "reenter" | "release";
  /** writes to the resource per hold (default: 1) */
  writesPerHold?: number;
  /** renew the lease every ttl/3 while holding (the watchdog) (default: false) */
  renew?: boolean | "on" | "off";
  /** client i starts i*stagger ms after the run starts (default: 0) */
  stagger?: number;
  /** seconds between faults (jittered +-50%) (default: 2) */
  nemesisInterval?: number;
  /** where faults land: holder (a pause or latency on a worker whose client holds a lock, a kill, clock jump or server pause on a node that granted the hold, a partition that leaves the holder's worker without the lock service) or random (default: holder) */
  aim?: "holder" | "random";
  /** the old name of --aim (default: holder) */
  pauseTarget?: "holder" | "random";
  /** shortest SIGSTOP in ms (default: ttl / 2) */
  pauseMin?: number;
  /** longest SIGSTOP in ms (default: 4 x ttl) */
  pauseMax?: number;
  /** seconds clients get to finish after the heal (default: from ttl, pause and timeouts) */
  grace?: number;
  /** grudges a partition picks from (default: isolate-one,isolate-leader,majority-minority,random-halves,bridge (behind proxies of yours: isolate-one,isolate-leader)) */
  partition?: string | Array<"isolate-one" | "isolate-leader" | "majority-minority" | "random-halves" | "bridge">;
  /** cut links drop data silently (timeout) or refuse connections (reset); network (--deploy docker, etcd): links as timeout, and the members cut off the run's container network instead of through the fault proxy (default: timeout) */
  partitionMode?: "timeout" | "reset" | "network";
  /** shortest partition, latency or clock fault in ms (default: ttl) */
  faultMin?: number;
  /** longest partition, latency or clock fault in ms (default: 5 x ttl) */
  faultMax?: number;
  /** ms of latency the latency nemesis adds each way (default: 1.2 x ttl) */
  latency?: number;
  /** ms of jitter on that latency (default: latency / 8) */
  jitter?: number;
  /** ms a clock fault moves a wall clock, forward or back at random (default: 2 x ttl) */
  clockOffset?: number;
  /** whose wall clocks --nemesis clock moves: the lock servers', or the client worker processes' and their adapter programs' (a lease judged by the client's clock; any backend; the history's times stay on the monotonic clock) (default: servers) */
  clockTarget?: "servers" | "clients";
  /** clock faults to pick from: bump (one jump) or strobe (flip back and forth) (default: bump,strobe) */
  clockModes?: string | Array<"bump" | "strobe">;
  /** ms between the flips of a strobing clock (default: 100) */
  strobePeriod?: number;
  /** ms a killed server stays down before it is started again (default: ttl) */
  restartDelay?: number;
  /** --backend postgres: fsync on. Off (the default) loses nothing to a SIGKILL of the server (the kernel holds its writes), only to a crash of the machine (default: false) */
  pgDurable?: boolean;
  /** --backend postgres: clients reach the server directly (through their proxies), or through pgbouncer in transaction pooling with one server connection (P1: session advisory locks break) (default: none) */
  pgPooler?: "none" | "pgbouncer";
  /** --backend dynamodb: what a killed dynalite remembers: its tables on disk (LevelDB in the run directory), or nothing (memory: it comes back empty, the lock table is made again and the fences start over) (default: disk) */
  dynamoPersistence?: "disk" | "memory";
  /** --backend lockserver: what a killed lock server remembers: its journal of grants, renewals and releases, fsynced before each answer (always), or nothing (none: it comes back with no holders and every fence counter at 0) (default: always) */
  lockserverPersistence?: "none" | "always";
  /** Redis AOF fsync policy: what a killed node remembers (none: nothing) (default: none) */
  redisPersistence?: "none" | "everysec" | "always";
  /** where the lock servers run: local child processes, containers of a Docker API engine (DOCKER_HOST, /var/run/docker.sock, Podman's socket), or a cluster of yours (--endpoints) (default: local) */
  deploy?: "local" | "docker" | "external";
  /** --deploy external: the servers, host:port or name=host:port comma-separated, or a JSON file with control commands, a Toxiproxy and proxies of yours (docs/clusters.md) */
  endpoints?: string;
  /** every lock key's name starts with this; a run's keys are deleted at the end with --deploy external (default: fencecheck:<run>: with --deploy external, else none) */
  keyPrefix?: string;
  /** how pause-server holds a server: SIGSTOP to its process, or (--deploy docker) the cgroup freezer (docker pause) (default: signal) */
  pauseMode?: "signal" | "freeze";
  /** URL of a Toxiproxy to make the links in, e.g. http://127.0.0.1:8474 (default: our own fault proxy) */
  toxiproxy?: string;
  /** how workers reach the servers and the resource: through the fault proxy (partitions and latency need it), or directly, for measurements without the proxy's cost (default: proxy) */
  links?: "proxy" | "direct";
  /** etcd clients: each logical client its own etcd3 client and connections, as separate programs have, or one shared by the clients of a worker, as one program's goroutines share theirs (for many contenders: a thousand gRPC clients stall a worker) (default: per-client) */
  connections?: "per-client" | "per-worker";
  /** ms without an answer before an operation's outcome is unknown (info) (default: 3 x ttl, at least 1000) */
  commandTimeout?: number;
  /** the same seed gives the same schedule of operations and faults (default: random, printed) */
  seed?: number;
  /** directory of the run store (default: histories) */
  store?: string;
  /** keep the servers' data directories (data/) in the run directory; by default they are removed at the end (etcd preallocates 128 MB of WAL per member) (default: false) */
  keepData?: boolean;
  /** servers take consecutive ports from here (default: free ports) */
  portBase?: number;
  /** serve every worker's, the fault proxy's and the resource's Prometheus metrics at http://127.0.0.1:PORT/metrics during the run (0: a free port, printed at start) (default: off) */
  metricsPort?: number;
  /** strict: the model check's strict-mutex-violation makes a run invalid (leases break a strict mutex by design) (default: lease) */
  model?: "lease" | "strict";
}
