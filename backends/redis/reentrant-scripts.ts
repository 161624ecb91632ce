// The reentrant lock's scripts, in the layout of Redisson's RLock: the lock key is
// a hash of owner -> hold count with a PEXPIRE lease; the fence counter is a key
// of its own, and the hash keeps the current fence in its field `fence` (owners
// are never named "fence": they end in -h<n>).

/** The hash field that keeps the hold's current fence. */
export const FENCE_FIELD = "fence";

/** What the acquire script returns besides a fence (a fence is always >= 1). */
export const BUSY = 0;
export const NOT_OWNER = -1;

/**
 * KEYS: lock hash, fence counter. ARGV: owner, ttl ms, reenter (1/0), a new fence
 * on re-entry (1/0), a re-entry refreshes the lease (1/0). The fence granted;
 * BUSY when another owner holds it; NOT_OWNER for a re-entry whose owner no
 * longer holds it.
 *
 * One departure from Redisson: there a re-entry is any acquire by the same thread,
 * so a re-entry whose lease ran out takes the free lock anew at count 1, and the
 * inner release then frees it under the outer hold. Here a re-entry names its
 * outer hold, and a re-entry of a hold that is gone is refused, as Hazelcast's
 * FencedLock refuses it (LockOwnershipLostException): the count the client keeps
 * and the one in the hash never disagree.
 */
export const ACQUIRE = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[3] == '1' then return ${NOT_OWNER} end
  local fence = redis.call('INCR', KEYS[2])
  redis.call('HSET', KEYS[1], ARGV[1], 1, '${FENCE_FIELD}', fence)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return fence
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  if ARGV[5] == '1' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
  if ARGV[4] == '1' then
    local fence = redis.call('INCR', KEYS[2])
    redis.call('HSET', KEYS[1], '${FENCE_FIELD}', fence)
    return fence
  end
  return tonumber(redis.call('HGET', KEYS[1], '${FENCE_FIELD}'))
end
if ARGV[3] == '1' then return ${NOT_OWNER} end
return ${BUSY}`;

/** KEYS: lock hash; ARGV: owner, ttl ms. 1 when the owner still held it. */
export const RENEW = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`;

/**
 * KEYS: lock hash; ARGV: owner, delete whatever the count (1/0). The owner's count
 * left (0: the lock is free), or NOT_OWNER. The second argument is the defect kept
 * on purpose (redis-reentrant-unsafe-release): the inner release frees the outer hold.
 */
export const RELEASE = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return ${NOT_OWNER} end
if ARGV[2] == '1' then
  redis.call('DEL', KEYS[1])
  return 0
end
local left = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if left <= 0 then redis.call('DEL', KEYS[1]) end
return left`;
