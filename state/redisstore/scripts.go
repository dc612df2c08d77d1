package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically on the server. Every key a script touches
// carries the namespace's one hash tag, so on a Redis Cluster they all live
// in one slot. Scripts are sent by EVALSHA and, after a NOSCRIPT reply (a
// restarted or failed-over server), by EVAL (redis.Script.Run).

// spendScript checks and adds counters, and tells what it saw.
//
// KEYS: for each spend, its window's slot keys, oldest first; the last is the
// current slot. Then the heartbeat set (see alive.go).
// ARGV[1]: "1" to check limits (Spend), "0" to add without checking (Add).
// ARGV[2]: the number of spends; then four values per spend: slots, limit,
// amount, ttl in milliseconds.
//
// It returns {failed, alive, counts}: failed is -1 when every amount was
// added, or the 0-based index of the first spend whose window sum plus
// amount passes its limit, and then nothing was added; a limit of 0, or an
// amount of 0 or less, is never refused. alive is the size of the heartbeat
// set. counts is every slot's count after the call, in KEYS order, joined
// by commas (one string rather than an array of replies, cheaper to decode):
// the instance's view of the shared counters (see view.go).
var spendScript = redis.NewScript(`
local check = ARGV[1] == '1'
local n = tonumber(ARGV[2])
local vals, sums = {}, {}
local k, a = 1, 3
for i = 1, n do
  local last = k + tonumber(ARGV[a]) - 1
  local sum = 0
  for from = k, last, 1000 do
    local got = redis.call('MGET', unpack(KEYS, from, math.min(from + 999, last)))
    for j = 1, #got do
      local v = tonumber(got[j]) or 0
      vals[from + j - 1] = v
      sum = sum + v
    end
  end
  sums[i] = sum
  k = last + 1
  a = a + 4
end
local nslots = k - 1
local failed = -1
if check then
  a = 3
  for i = 1, n do
    local limit, amount = tonumber(ARGV[a+1]), tonumber(ARGV[a+2])
    if limit > 0 and amount > 0 and sums[i] + amount > limit then
      failed = i - 1
      break
    end
    a = a + 4
  end
end
if failed < 0 then
  k, a = 1, 3
  for i = 1, n do
    local cur = k + tonumber(ARGV[a]) - 1
    vals[cur] = redis.call('INCRBY', KEYS[cur], ARGV[a+2])
    redis.call('PEXPIRE', KEYS[cur], ARGV[a+3])
    k = cur + 1
    a = a + 4
  end
end
local out = {}
for j = 1, nslots do out[j] = string.format('%d', vals[j]) end
return {failed, redis.call('ZCARD', KEYS[#KEYS]), table.concat(out, ',')}
`)

// pushScript writes back an instance's view of counter slots when Redis
// returns (see view.go). In mode "add" (Redis kept its data) each slot gets
// what the instance spent meanwhile added. In mode "seed" (Redis lost its
// data) each slot becomes the larger of its count plus what the instance
// spent meanwhile and the instance's own view of it (seen plus spent), so
// that an empty Redis gets back everything the instance knew. A slot's
// expiry is never shortened.
//
// KEYS: slot keys. ARGV[1]: "add" or "seed"; then three values per key:
// pending, view, ttl in milliseconds.
//
// It returns every slot's count afterwards, joined by commas.
var pushScript = redis.NewScript(`
local seed = ARGV[1] == 'seed'
local out = {}
for i = 1, #KEYS do
  local a = 1 + (i - 1) * 3
  local pending, view, ttl = tonumber(ARGV[a+1]), tonumber(ARGV[a+2]), tonumber(ARGV[a+3])
  local cur = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  local new = cur + pending
  if seed and view > new then new = view end
  if new ~= cur then
    redis.call('SET', KEYS[i], string.format('%d', new), 'KEEPTTL')
  end
  if redis.call('PTTL', KEYS[i]) < ttl then
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
  out[i] = string.format('%d', new)
end
return table.concat(out, ',')
`)

// epochScript tells whether Redis kept its data: it returns the epoch key's
// value, after setting it to ARGV[1] if it was missing (a Redis that
// restarted empty, or a new deployment).
//
// KEYS[1]: the epoch key. ARGV[1]: a new epoch.
var epochScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return cur end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
`)

// heartbeatScript records an instance as alive and counts the living.
//
// KEYS[1]: the heartbeat set. ARGV: the instance's id, now and the oldest
// heartbeat still alive in unix milliseconds, the set's ttl in
// milliseconds.
//
// It returns how many instances are alive.
var heartbeatScript = redis.NewScript(`
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return redis.call('ZCARD', KEYS[1])
`)

// setRestScript records a rest unless a manual one holds the key and the new
// one is automatic.
//
// KEYS[1]: the rest's key (a hash: manual, rest). KEYS[2]: the index set of
// rest names.
// ARGV: name, rest JSON, manual ("1" or "0"), ttl in milliseconds (0: none),
// events channel, event JSON.
//
// It returns 1 when the rest was recorded (and published), 0 when a manual
// rest kept it out.
var setRestScript = redis.NewScript(`
if ARGV[3] == '0' and redis.call('HGET', KEYS[1], 'manual') == '1' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'manual', ARGV[3], 'rest', ARGV[2])
if tonumber(ARGV[4]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
`)

// clearRestScript removes a rest: with ARGV[2] "0" only an automatic one.
//
// KEYS[1]: the rest's key. KEYS[2]: the index set.
// ARGV: name, manual ("1" or "0"), events channel, event JSON.
//
// It returns 1 when a rest was removed (and published), else 0.
var clearRestScript = redis.NewScript(`
local m = redis.call('HGET', KEYS[1], 'manual')
if not m then return 0 end
if m == '1' and ARGV[2] == '0' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`)

// restsScript returns every recorded rest's JSON and drops the names of
// rests that expired from the index.
//
// KEYS[1]: the index set. ARGV[1]: the prefix of rest keys.
//
// The rest keys it reads are not declared in KEYS: they are only known from
// the index. They share the index's hash tag, so the script still runs on a
// single Cluster slot.
var restsScript = redis.NewScript(`
local out = {}
for _, name in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local v = redis.call('HGET', ARGV[1] .. name, 'rest')
  if v then out[#out + 1] = v else redis.call('SREM', KEYS[1], name) end
end
return out
`)
