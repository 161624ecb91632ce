// The Redis lock's three scripts, apart from the client that runs them (which
// needs ioredis): an adapter of a team's own takes them from `fencecheck/adapter`
// with no Redis library of ours coming along.

/** The lock's three scripts, shared with adapters through fencecheck/adapter (examples/redis-lock-adapter.ts). */
export const REDIS_LOCK_SCRIPTS = {
  /** KEYS: lock, fence counter; ARGV: owner, ttl ms. The fence, or nil when held. */
  acquire: `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false`,
  /** KEYS: lock; ARGV: owner, ttl ms. 1 when this owner still held it. */
  renew: `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`,
  /** KEYS: lock; ARGV: owner. 1 when this owner's key was deleted. */
  release: `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`,
};
