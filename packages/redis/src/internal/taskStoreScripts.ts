/**
 * The task store's Redis layout and its Lua scripts. Each script runs
 * atomically; those that change a task publish on `${prefix}tasks:changes`
 * `<version> <taskId>` (a write) or `- <taskId>` (a removal).
 *
 * - `${prefix}task:<taskId>`: a hash: `r` the record as JSON, `v` its
 *   version (1 at creation, +1 per write), `s` its creation number (unique,
 *   from `${prefix}tasks:seq`), `q` its requestor, `e` its expiry
 *   (`createdAt + ttlMs`, "" for none).
 * - `${prefix}tasks:all`: every task id, scored by creation number.
 * - `${prefix}tasks:expiry`: the ids of tasks with a TTL, scored by expiry.
 * - `${prefix}tasks:finished`: the ids of finished tasks, by creation number.
 * - `${prefix}tasks:of:<requestor>`: a requestor's task ids, by creation number.
 *
 * The scripts build the keys of other tasks from the prefix (to evict them),
 * so they run on one Redis (a primary), not across a cluster's slots.
 *
 * @internal
 */
import * as Redis from "effect/persistence/Redis"

const PRELUDE = `
local prefix = ARGV[1]
local channel = prefix .. 'tasks:changes'
local function taskKey(id) return prefix .. 'task:' .. id end
local function drop(id)
  local k = taskKey(id)
  local q = redis.call('HGET', k, 'q')
  redis.call('DEL', k)
  redis.call('ZREM', prefix .. 'tasks:all', id)
  redis.call('ZREM', prefix .. 'tasks:expiry', id)
  redis.call('ZREM', prefix .. 'tasks:finished', id)
  if q then redis.call('ZREM', prefix .. 'tasks:of:' .. q, id) end
  redis.call('PUBLISH', channel, '- ' .. id)
end
-- a requestor's index lives as long as its longest-lived task
local function keep(of, gc, existed)
  if gc == '' then
    redis.call('PERSIST', of)
  elseif existed == 0 then
    redis.call('PEXPIRE', of, gc)
  else
    local pttl = redis.call('PTTL', of)
    if pttl >= 0 and pttl < tonumber(gc) then redis.call('PEXPIRE', of, gc) end
  end
end
`

/** The fields of a write: the record, its expiry and its garbage collection. @internal */
export interface Write {
  readonly json: string
  /** `createdAt + ttlMs`, or "" */
  readonly expiresAt: string
  /** Milliseconds until Redis deletes it, or "" (never) */
  readonly gcMillis: string
  readonly terminal: boolean
}

/**
 * Creates a task: -1 if the id is in use (by a task not expired at `now`),
 * -2 if the store is full (after dropping up to 1,000 expired tasks, then
 * the oldest finished ones); else its creation number.
 *
 * @internal
 */
export const create = Redis.script(
  (prefix: string, taskId: string, requestor: string, write: Write, now: number, capacity: number) => [
    prefix,
    taskId,
    requestor,
    write.json,
    write.expiresAt,
    write.gcMillis,
    write.terminal ? "1" : "0",
    now,
    capacity
  ],
  {
    numberOfKeys: 0,
    lua: `${PRELUDE}
local id = ARGV[2]
local k = taskKey(id)
local now = tonumber(ARGV[8])
if redis.call('EXISTS', k) == 1 then
  local e = redis.call('HGET', k, 'e')
  if (not e) or e == '' or now < tonumber(e) then return -1 end
  drop(id)
end
local all = prefix .. 'tasks:all'
local capacity = tonumber(ARGV[9])
if redis.call('ZCARD', all) >= capacity then
  local expired = redis.call('ZRANGEBYSCORE', prefix .. 'tasks:expiry', '-inf', now, 'LIMIT', 0, 1000)
  for _, old in ipairs(expired) do drop(old) end
  local n = redis.call('ZCARD', all)
  if n >= capacity then
    local finished = redis.call('ZRANGE', prefix .. 'tasks:finished', 0, n - capacity)
    for _, old in ipairs(finished) do drop(old) end
  end
  if redis.call('ZCARD', all) >= capacity then return -2 end
end
local seq = redis.call('INCR', prefix .. 'tasks:seq')
redis.call('HSET', k, 'v', 1, 'r', ARGV[4], 'q', ARGV[3], 'e', ARGV[5], 's', seq)
if ARGV[6] ~= '' then redis.call('PEXPIRE', k, ARGV[6]) end
redis.call('ZADD', all, seq, id)
if ARGV[5] ~= '' then redis.call('ZADD', prefix .. 'tasks:expiry', ARGV[5], id) end
if ARGV[7] == '1' then redis.call('ZADD', prefix .. 'tasks:finished', seq, id) end
local of = prefix .. 'tasks:of:' .. ARGV[3]
local existed = redis.call('EXISTS', of)
redis.call('ZADD', of, seq, id)
keep(of, ARGV[6], existed)
redis.call('PUBLISH', channel, '1 ' .. id)
return seq`
  }
).withReturnType<number>()

/**
 * Writes a task only if it is still the incarnation `seq` at `version`: its
 * new version, or 0 when it changed (or went) meanwhile.
 *
 * @internal
 */
export const update = Redis.script(
  (prefix: string, taskId: string, seq: number, version: number, write: Write) => [
    prefix,
    taskId,
    seq,
    version,
    write.json,
    write.expiresAt,
    write.gcMillis,
    write.terminal ? "1" : "0"
  ],
  {
    numberOfKeys: 0,
    lua: `${PRELUDE}
local id = ARGV[2]
local k = taskKey(id)
local current = redis.call('HMGET', k, 's', 'v', 'q')
if current[1] ~= ARGV[3] or current[2] ~= ARGV[4] then return 0 end
local v = tonumber(ARGV[4]) + 1
redis.call('HSET', k, 'v', v, 'r', ARGV[5], 'e', ARGV[6])
if ARGV[6] == '' then
  redis.call('ZREM', prefix .. 'tasks:expiry', id)
else
  redis.call('ZADD', prefix .. 'tasks:expiry', ARGV[6], id)
end
if ARGV[7] == '' then redis.call('PERSIST', k) else redis.call('PEXPIRE', k, ARGV[7]) end
if ARGV[8] == '1' then
  redis.call('ZADD', prefix .. 'tasks:finished', ARGV[3], id)
else
  redis.call('ZREM', prefix .. 'tasks:finished', id)
end
keep(prefix .. 'tasks:of:' .. current[3], ARGV[7], 1)
redis.call('PUBLISH', channel, v .. ' ' .. id)
return v`
  }
).withReturnType<number>()

/**
 * Removes a task if its hash `field` is `expected` (`q`: it is the
 * requestor's; `s`: it is still that incarnation): 1 if it did.
 *
 * @internal
 */
export const dropIf = Redis.script(
  (prefix: string, taskId: string, field: "q" | "s", expected: string) => [prefix, taskId, field, expected],
  {
    numberOfKeys: 0,
    lua: `${PRELUDE}
if redis.call('HGET', taskKey(ARGV[2]), ARGV[3]) == ARGV[4] then
  drop(ARGV[2])
  return 1
end
return 0`
  }
).withReturnType<number>()

/**
 * Up to `count` of a requestor's tasks created before `before` (a
 * `ZREVRANGEBYSCORE` bound), newest first, as `[scanned, id, score, s, v, r,
 * …]`; ids whose record Redis collected are dropped from the index.
 *
 * @internal
 */
export const page = Redis.script(
  (prefix: string, requestor: string, before: string, count: number) => [prefix, requestor, before, count],
  {
    numberOfKeys: 0,
    lua: `${PRELUDE}
local of = prefix .. 'tasks:of:' .. ARGV[2]
local ids = redis.call('ZREVRANGEBYSCORE', of, ARGV[3], '-inf', 'WITHSCORES', 'LIMIT', 0, ARGV[4])
local out = { math.floor(#ids / 2) }
for i = 1, #ids, 2 do
  local id = ids[i]
  local h = redis.call('HMGET', taskKey(id), 's', 'v', 'r')
  if h[1] then
    table.insert(out, id)
    table.insert(out, ids[i + 1])
    table.insert(out, h[1])
    table.insert(out, h[2])
    table.insert(out, h[3])
  else
    redis.call('ZREM', of, id)
  end
end
return out`
  }
).withReturnType<ReadonlyArray<unknown>>()
