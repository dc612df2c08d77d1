package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically on the server. Every key a script touches
// carries the namespace's one hash tag, so on a Redis Cluster they all live
// in one slot. Scripts are sent by EVALSHA and, after a NOSCRIPT reply (a
// restarted or failed-over server), by EVAL (redis.Script.Run).

// spendScript checks and adds counters.
//
// KEYS: for each spend, its window's slot keys, oldest first; the last is the
// current slot.
// ARGV[1]: "1" to check limits (Spend), "0" to add without checking (Add).
// ARGV[2]: the number of spends; then four values per spend: slots, limit,
// amount, ttl in milliseconds.
//
// It returns -1 when every amount was added, or the 0-based index of the
// first spend whose window sum plus amount passes its limit; then nothing was
// added. A limit of 0, or an amount of 0 or less, is never refused.
var spendScript = redis.NewScript(`
local check = ARGV[1] == '1'
local n = tonumber(ARGV[2])
if check then
  local k, a = 1, 3
  for i = 1, n do
    local slots, limit, amount = tonumber(ARGV[a]), tonumber(ARGV[a+1]), tonumber(ARGV[a+2])
    if limit > 0 and amount > 0 then
      local sum = 0
      local last = k + slots - 1
      for from = k, last, 1000 do
        local vals = redis.call('MGET', unpack(KEYS, from, math.min(from + 999, last)))
        for j = 1, #vals do
          if vals[j] then sum = sum + tonumber(vals[j]) end
        end
      end
      if sum + amount > limit then return i - 1 end
    end
    k = k + slots
    a = a + 4
  end
end
local k, a = 1, 3
for i = 1, n do
  local slots, amount = tonumber(ARGV[a]), ARGV[a+2]
  local key = KEYS[k + slots - 1]
  redis.call('INCRBY', key, amount)
  redis.call('PEXPIRE', key, ARGV[a+3])
  k = k + slots
  a = a + 4
end
return -1
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
