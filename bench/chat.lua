-- wrk script of bench/run.sh: POST one fixed chat request (a system prompt
-- and a user question, about 1.6 KB of JSON, as a support assistant sends)
-- and print one RESULT line that run.sh parses.
--
-- Environment, read by each wrk thread (all optional):
--   MODEL   the model (chain) to name        default gpt-4o-mini
--   STREAM  1: ask for a streamed answer    default 0
--   AUTH    the Authorization header        default none
local model  = os.getenv("MODEL") or "gpt-4o-mini"
local stream = os.getenv("STREAM") == "1"
local auth   = os.getenv("AUTH")

local system = table.concat({
  "You are the help desk of Harbor Lines, a ferry operator serving six islands.",
  "Answer questions about timetables, tickets, vehicles on board, pets, refunds and delays.",
  "Keep answers short: a few sentences, or numbered steps when the customer must do something.",
  "Never promise a refund or a seat; say which form or desk handles it and what to bring.",
  "If the question needs a booking reference you do not have, ask for it once and explain where it",
  "is printed (top right of the e-ticket, six letters and digits). Quote times in 24-hour format",
  "and say which port they are for. Today is a Tuesday in the summer timetable; the 07:40 and",
  "19:15 crossings run daily, the 12:30 only on weekdays, and the night boat on Fridays only."
}, " ")
local user = table.concat({
  "Hello, we are a family of four with a small camper van (5.9 m long, 2.7 m high) and a dog.",
  "We booked the 07:40 from the mainland to the north island next Saturday, but our flight home was",
  "moved, so we now need to come back on the Friday night boat instead of the Sunday one.",
  "Can we change only the return leg online, or do we have to call? Is there a fee for the change,",
  "and is the camper still fine on the night boat, which I read is smaller? The dog travels in the",
  "van on the day crossings, but I am not sure that is allowed at night. If it is not, are there",
  "kennels on board, and do we need to reserve one? Last thing: our booking reference is on the",
  "e-ticket but my partner has it, so can you tell me what I need to have ready before calling?",
  "Thank you very much for your help, we are really looking forward to the trip. Best, Tomasz."
}, " ")

local function str(s)
  return '"' .. s:gsub('[\\"]', '\\%0') .. '"'
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if auth and auth ~= "" then wrk.headers["Authorization"] = auth end
wrk.body = '{"model":' .. str(model) ..
  ',"messages":[{"role":"system","content":' .. str(system) ..
  '},{"role":"user","content":' .. str(user) .. '}]' ..
  ',"temperature":0.3,"max_tokens":400,"user":"bench-visitor-7"' ..
  (stream and ',"stream":true' or '') .. '}'

-- done prints the run's figures on one line: latency in ms, the count of
-- non-2xx answers and of socket errors (connect, read, write, timeout).
function done(summary, latency, requests)
  local secs = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d secs=%.3f rps=%.1f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f non2xx=%d sockerr=%d body_bytes=%d\n",
    summary.requests, secs, summary.requests / secs,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    e.status, e.connect + e.read + e.write + e.timeout, #wrk.body))
end
