// redis-semaphore's counting locks, as its README uses them: `new Semaphore(redis,
// key, maxCount, options)` (a sorted set of holders' identifiers scored by their
// client's clock; an acquire trims entries older than the lock timeout and adds
// its own while fewer than maxCount remain) and `new MultiSemaphore(redis, key,
// maxCount, permits, options)`, which adds `permits` entries at once. maxCount
// is the run's --lock semaphore:N (a mutex run: 1). One hold of the
// MultiSemaphore takes one permit: the workload's semaphore lets N holds in at
// once, and a hold of k permits would only let fewer in, which no check can
// tell from a busier run. Everything else, including cancellation, is the
// Mutex's wrapper (redis-semaphore.ts).
import { MultiSemaphore, Semaphore } from "redis-semaphore";
import type { LockAdapter } from "../../clients/adapter.ts";
import { RedisSemaphoreLock } from "./redis-semaphore.ts";

const maxCount = (permits: number | undefined): number => permits ?? 1;

/** Adapters but for their one-line descriptions, which the registry (index.ts) holds. */
export const redisSemaphoreCounting: Omit<LockAdapter, "describe"> = {
  backends: ["redis"],
  fences: false,
  create: (ctx) => new RedisSemaphoreLock(ctx, (redis, key, options, request) => new Semaphore(redis, key, maxCount(request?.permits), options)),
};

export const redisMultiSemaphore: Omit<LockAdapter, "describe"> = {
  backends: ["redis"],
  fences: false,
  create: (ctx) => new RedisSemaphoreLock(ctx, (redis, key, options, request) => new MultiSemaphore(redis, key, maxCount(request?.permits), 1, options)),
};
