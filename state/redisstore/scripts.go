package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically on the server. Every key a script touches
// carries the namespace's one hash tag, so on a Redis Cluster they all live
// in one slot. Scripts are sent by EVALSHA and, after a NOSCRIPT reply (a
// restarted or failed-over server), by EVAL (redis.Script.Run).

// spendScript checks and adds counters, and tells what it saw.
//
// A window of N slots is summed from three keys rather than N: its current
// slot {ns}:c:<key>:<slot>, the slot before it, and the window's sum
// {ns}:o:<key>, which holds the sum of the slots up to two
// before slot (the slots no request spends on any more, only late
// settles); in full "<slot>:<slots>:<sum>", for a window of that many
// slots. The sum is made again, from every slot, when the current slot
// moves on, once a slot per window; and every add to a slot it covers adds
// to it too, so it is always exact. A rolling day (25 slots) then costs a
// request three keys, not 25.
//
// KEYS[1] is the heartbeat set (see alive.go); then three keys per spend:
// its slot's, the slot before's, and its window's sum. The older slots a
// new sum reads are named by the script (the current slot's key with
// other numbers): they carry the namespace's hash tag like every key, so
// on a Cluster they live in the declared keys' slot.
// ARGV[1]: must, the number of spends checked and added all or nothing
// before the others (SpendSplit; the number of spends for Spend), or -1 to
// add without checking (Add). ARGV[2]: the number of spends. ARGV[3]: six
// numbers per spend, separated by spaces: slots, limit, amount, ttl in
// milliseconds, slot, and the largest share this instance asks for (0:
// none; see shares.go).
//
// Every window is summed before any add. It returns {failed, alive,
// counts, grants}: failed is -1 when every amount was added, or the 0-based index
// of the first spend whose window sum plus amount passes its limit: below
// must, nothing was added; must or above, the first must spends were
// added and no other. A limit of 0, or an amount of 0 or less, is never
// refused, so the two groups of a SpendSplit must not share a counter.
// alive is the size of the heartbeat set. counts holds two numbers per
// spend, joined by commas (one string rather than an array of replies,
// cheaper to decode): its slot's count after the call, and the sum of its
// window's older slots (-1 for an Add, which does not sum): the instance's
// view of the shared counters (see view.go). grants holds, joined by
// commas, the share added to each spend besides its amount: at most what
// was asked, and only where the window stays far from its limit: none
// when less than an eighth of the limit is left after the amount, unless
// what is left is still at least eight times what was asked for each
// instance alive (a limit far above its spends: a day of a billion tokens
// is not asked about at every request for its last 125 million), else a
// quarter of what is left, divided by the instances alive, and at least
// the amount (one more such spend), else 0. A slot's
// expiry is set when an add creates it: its ttl from then covers the
// window, since it was created within its own slot.
var spendScript = redis.NewScript(`
local must = tonumber(ARGV[1])
local check = must >= 0
local n = tonumber(ARGV[2])
local alive = redis.call('ZCARD', KEYS[1])
local nums = {}
for v in string.gmatch(ARGV[3], '%S+') do nums[#nums + 1] = tonumber(v) end
local got = redis.call('MGET', unpack(KEYS, 2, 1 + 3 * n))
local cur, older, at, osum = {}, {}, {}, {}
for i = 1, n do
  local b = (i - 1) * 6
  local slots, slot = nums[b + 1], nums[b + 5]
  cur[i] = tonumber(got[3 * i - 2]) or 0
  if got[3 * i] then
    local a, w, v = string.match(got[3 * i], '^(%-?%d+):(%d+):(%-?%d+)$')
    if tonumber(w) == slots then at[i], osum[i] = tonumber(a), tonumber(v) end
  end
  if not check then
    older[i] = -1
  else
    local o = 0
    if slots >= 2 then o = tonumber(got[3 * i - 1]) or 0 end
    if slots >= 3 then
      if at[i] ~= slot then
        local prefix = string.match(KEYS[3 * i - 1], '^(.*:)%-?%d+$')
        local names = {}
        for s = slot - slots + 1, slot - 2 do names[#names + 1] = prefix .. string.format('%d', s) end
        local sum = 0
        for _, v in ipairs(redis.call('MGET', unpack(names))) do sum = sum + (tonumber(v) or 0) end
        at[i], osum[i] = slot, sum
        redis.call('SET', KEYS[3 * i + 1], string.format('%d:%d:%d', slot, slots, sum), 'PX', string.format('%d', nums[b + 4]))
      end
      o = o + osum[i]
    end
    older[i] = o
  end
end
local failed, upto = -1, n
if check then
  for i = 1, n do
    local b = (i - 1) * 6
    local limit, amount = nums[b + 2], nums[b + 3]
    if limit > 0 and amount > 0 and older[i] + cur[i] + amount > limit then
      failed = i - 1
      if i <= must then upto = 0 else upto = must end
      break
    end
  end
end
local grants = {}
for i = 1, n do grants[i] = 0 end
for i = 1, upto do
  local b = (i - 1) * 6
  local slots, limit, amount, slot, ask = nums[b + 1], nums[b + 2], nums[b + 3], nums[b + 5], nums[b + 6]
  if check and ask > 0 and limit > 0 and amount > 0 then
    local room = limit - older[i] - cur[i] - amount
    local g = math.floor(room / (4 * math.max(alive, 1)))
    if g > ask then g = ask end
    if g >= amount and (room * 8 >= limit or room >= 8 * ask * math.max(alive, 1)) then
      grants[i] = g
      amount = amount + g
    end
  end
  local v = redis.call('INCRBY', KEYS[3 * i - 1], string.format('%d', amount))
  if v == amount then
    redis.call('PEXPIRE', KEYS[3 * i - 1], string.format('%d', nums[b + 4]))
  end
  cur[i] = v
  if at[i] and slot >= at[i] - slots + 1 and slot <= at[i] - 2 then
    osum[i] = osum[i] + amount
    redis.call('SET', KEYS[3 * i + 1], string.format('%d:%d:%d', at[i], slots, osum[i]), 'KEEPTTL')
  end
end
local out = {}
for i = 1, n do
  out[#out + 1] = string.format('%d', cur[i])
  out[#out + 1] = string.format('%d', older[i])
end
local gs = {}
for i = 1, n do gs[i] = string.format('%d', grants[i]) end
return {failed, alive, table.concat(out, ','), table.concat(gs, ',')}
`)

// pushScript writes back an instance's view of counter slots when Redis
// returns (see view.go). In mode "add" (Redis kept its data) each slot gets
// what the instance spent meanwhile added. In mode "seed" (Redis lost its
// data) each slot becomes the larger of its count plus what the instance
// spent meanwhile and the instance's own view of it (seen plus spent), so
// that an empty Redis gets back everything the instance knew. A slot's
// expiry is never shortened.
//
// KEYS: slot keys, then as many window sums ({ns}:o:<key>, see
// spendScript), each dropped: the next spend makes it again from the slots.
// ARGV[1]: "add" or "seed"; then three values per slot key: pending, view,
// ttl in milliseconds.
//
// It returns every slot's count afterwards, joined by commas.
var pushScript = redis.NewScript(`
local seed = ARGV[1] == 'seed'
local out = {}
local n = #KEYS / 2
for i = n + 1, #KEYS do redis.call('DEL', KEYS[i]) end
for i = 1, n do
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
