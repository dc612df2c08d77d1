#!/usr/bin/env bash
# Measure tollfree's own cost: wrk with bench/chat.lua against the fixed
# upstream (bench/upstream) called directly, a bare httputil.ReverseProxy in
# front of it (bench/proxy: the floor of any Go HTTP hop), and `tollfree
# serve` in front of it on the paths deployments take, all in one run, on
# loopback. Needs Go and wrk; Redis for the Redis rows (skipped without).
#
# usage: bench/run.sh            (from anywhere; takes about 10 minutes)
#
# Targets, non-streamed (each at 1, 16 and 64 connections):
#   direct           the upstream itself
#   proxy            bench/proxy in front of it
#   gateway          bench/gateway.yaml: no limits, local state
#   gateway-limits   bench/gateway-limits.yaml: every route and caller limit
#                    on (far above what a run spends), local state
#   gateway-redis    the same limits, counts in Redis (BENCH_REDIS)
#   gateway-calllog  bench/gateway.yaml with the call log on (LOGMODES)
# and streamed: direct, proxy, gateway, gateway-redis.
#
# environment (all optional):
#   OUTDIR     where results go                   (default <repo>/bench/results)
#   LOGMODES   "off on" adds gateway-calllog      (default "off on")
#   STREAMING  1 = also measure streamed answers  (default 1)
#   REDIS_URL  Redis for gateway-redis            (default redis://127.0.0.1:6379/15;
#              when nothing answers there and redis-server is installed, one
#              is started on port 18092 for the run)
#   PROFILE    1 = also take a CPU and an allocation profile of the gateway
#              at 64 connections, call_log off (default 1)
#   LOAD       0 = skip the load runs, only profile  (default 1)
#   DURATION   wrk's run at each level            (default 10s)
#   WARMUP     a warm-up at 16 connections first  (default 3s; none streaming)
#   THREADS    wrk threads, at most the connections (default 1)
#   TABLE      0 = skip the table of every target and level (and the
#              time to first token): with PAIRS=1, only the paired rounds
#   PAIRS      1 = also measure the ratios issue 18 sets targets for in
#              alternating rounds, both targets up at once (default 1)
#   ROUNDS     rounds of each pair at each level  (default 6)
#   ROUND      wrk's run in each round             (default 4s)
#
# Writes $OUTDIR/bench-<stamp>.tsv (a row per target and level, plus the
# gateway's RSS right after start), bench-<stamp>.md (the tables with
# ratios and deltas against direct and against the proxy, and the ratios
# issue 18 sets targets for), and with PROFILE=1 cpu-<stamp>.pprof,
# allocs0-<stamp>.pprof and allocs-<stamp>.pprof (allocations before and
# after a counted load: `go tool pprof -base allocs0 allocs` is that load's)
# and profile-<stamp>.txt, their top lists; cpu-stream-<stamp>.pprof for
# streamed answers at 16 connections; ttft-<stamp>.txt, the time to the
# first token of each target (TTFT_N requests each, default 2000); with
# PAIRS=1, pairs-<stamp>.tsv, a row per round: pair, connections, round,
# A's and B's requests a second and their ratio, A's and B's CPU a request
# (µs) and their ratio.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
LUA=$HERE/chat.lua
DURATION=${DURATION:-10s}
THREADS=${THREADS:-1}
OUTDIR=${OUTDIR:-$HERE/results}
LOGMODES=${LOGMODES:-off on}
STREAMING=${STREAMING:-1}
PROFILE=${PROFILE:-1}
PAIRS=${PAIRS:-1}
TABLE=${TABLE:-1}
LOAD=${LOAD:-1}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/15}
MOCK_ADDR=127.0.0.1:18080
PROXY_ADDR=127.0.0.1:18085
GW_ADDR=127.0.0.1:18090
PPROF_ADDR=127.0.0.1:18091
URL_PATH=/v1/chat/completions

command -v wrk >/dev/null || { echo "wrk not found: apt-get install -y wrk" >&2; exit 1; }
mkdir -p "$OUTDIR"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
TSV=$OUTDIR/bench-$STAMP.tsv
MD=$OUTDIR/bench-$STAMP.md
WORK=$(mktemp -d)
PIDS_STARTED=()
cleanup() {
  for p in "${PIDS_STARTED[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# Every binary is built as the Dockerfile builds tollfree's image (static,
# CGO_ENABLED=0, -trimpath, -s -w): what deployments run, and the floor
# built the same way. A cgo build maps libc as well: 1.5 MB more RSS.
BUILD=(env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w")
(cd "$ROOT" && "${BUILD[@]}" -o "$WORK/upstream" ./bench/upstream && "${BUILD[@]}" -o "$WORK/proxy" ./bench/proxy && "${BUILD[@]}" -o "$WORK/ttft" ./bench/ttft && "${BUILD[@]}" -o "$WORK/tollfree" ./cmd/tollfree)

wait_up() { # wait_up URL: until it answers at all, 10 s at most
  for _ in $(seq 100); do
    if curl -s -o /dev/null -m 1 "$1"; then return 0; fi
    sleep 0.1
  done
  echo "nothing answers at $1" >&2; exit 1
}
rss_kb() { ps -o rss= -p "$1" | tr -d ' '; }

"$WORK/upstream" -addr "$MOCK_ADDR" >"$WORK/upstream.log" 2>&1 &
MOCK_PID=$!; PIDS_STARTED+=("$MOCK_PID")
wait_up "http://$MOCK_ADDR/health"

GW_PID=
start_gateway() { # start_gateway NAME CONFIG CALL_LOG REDIS [extra serve flags]
  local name=$1 config=$2 log=$3 redis=$4; shift 4
  local path=off # call_log takes "off" or a file
  [ "$log" = on ] && path=$WORK/data/calls.jsonl
  rm -rf "$WORK/data"
  BENCH_LISTEN=$GW_ADDR BENCH_DATA_DIR=$WORK/data BENCH_CALL_LOG=$path BENCH_REDIS=$redis \
    BENCH_UPSTREAM=http://$MOCK_ADDR/v1 \
    "$WORK/tollfree" serve -config "$HERE/$config" "$@" >"$WORK/gateway.log" 2>&1 &
  GW_PID=$!; PIDS_STARTED+=("$GW_PID")
  wait_up "http://$GW_ADDR/healthz"
  sleep 1
  echo "# $name pid $GW_PID idle RSS right after start: $(rss_kb "$GW_PID") KiB"
  printf 'gateway-start\t-\t-\t-\t-\t-\t-\t-\t%s\t-\t%s\n' "$(rss_kb "$GW_PID")" "$name" >>"$TSV.start"
}
stop_gateway() { kill "$GW_PID"; wait "$GW_PID" 2>/dev/null || true; }

rss_sum() { local t=0 p r; for p in "$@"; do r=$(rss_kb "$p" 2>/dev/null || true); t=$((t + ${r:-0})); done; echo "$t"; }
result() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

# load NAME URL PID STREAM CONNS: a check that the target answers chat.lua's
# request with 200s, a warm-up, then wrk at each level of CONNS, the RSS of
# PID sampled each second; a row per level appended to $TSV.
load() {
  local name=$1 url=$2 pid=$3 conns=$5 c t res idle maxf sampler
  export MODEL=gpt-4o-mini STREAM=$4
  res=$(wrk -t1 -c1 -d1s -s "$LUA" "$url" | grep '^RESULT' || true)
  if [ -z "$res" ] || [ "$(result non2xx "$res")" != 0 ] || [ "$(result requests "$res")" = 0 ]; then
    echo "# $name does not answer chat.lua's request with 200s ($res); not measured" >&2; exit 2
  fi
  if [ "$WARMUP" != 0 ]; then wrk -t1 -c16 -d"$WARMUP" -s "$LUA" "$url" >/dev/null; sleep 1; fi
  [ -s "$TSV" ] || printf 'name\tstream\tconns\trps\tp50_ms\tp99_ms\tnon2xx\tsockerr\trss_idle_kb\trss_load_max_kb\tdate\n' >"$TSV"
  for c in $conns; do
    t=$THREADS; [ "$t" -gt "$c" ] && t=$c
    idle=$(rss_sum "$pid"); maxf=$WORK/rss-max; echo "$idle" >"$maxf"
    ( while sleep 1; do r=$(rss_sum "$pid"); [ "$r" -gt "$(cat "$maxf")" ] && echo "$r" >"$maxf"; done ) &
    sampler=$!
    res=$(wrk -t"$t" -c"$c" -d"$DURATION" --timeout 10s -s "$LUA" "$url" | grep '^RESULT' || true)
    kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$STREAM" "$c" "$(result rps "$res")" \
      "$(result p50_ms "$res")" "$(result p99_ms "$res")" "$(result non2xx "$res")" "$(result sockerr "$res")" \
      "$idle" "$(cat "$maxf")" "$(date -u +%FT%TZ)" | tee -a "$TSV"
    sleep 1
  done
}

echo "# machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr), $(go version | cut -d' ' -f3), wrk $(wrk -v 2>&1 | head -1 | cut -d' ' -f2)"
# Redis for gateway-redis: REDIS_URL if it answers, else one of our own.
REDIS=
if [ "$LOAD" = 1 ]; then
  hostport=$(sed -E 's#^redis://([^/]*).*#\1#' <<<"$REDIS_URL")
  if command -v redis-cli >/dev/null && redis-cli -h "${hostport%:*}" -p "${hostport##*:}" ping >/dev/null 2>&1; then
    REDIS=$REDIS_URL
  elif command -v redis-server >/dev/null; then
    redis-server --port 18092 --bind 127.0.0.1 --save "" --appendonly no >"$WORK/redis.log" 2>&1 &
    PIDS_STARTED+=("$!"); sleep 0.5
    REDIS=redis://127.0.0.1:18092/0
  else
    echo "# no Redis at $REDIS_URL and no redis-server: gateway-redis not measured" >&2
  fi
  [ -n "$REDIS" ] && echo "# gateway-redis keeps its counts in $REDIS"
fi

"$WORK/proxy" -addr "$PROXY_ADDR" -upstream "http://$MOCK_ADDR" >"$WORK/proxy.log" 2>&1 &
PROXY_PID=$!; PIDS_STARTED+=("$PROXY_PID")
wait_up "http://$PROXY_ADDR/health"

# gateway NAME CONFIG CALL_LOG REDIS STREAM: start, load, stop.
gateway() {
  local warm=$6
  start_gateway "$1" "$2" "$3" "$4"
  WARMUP=$warm load "$1" "http://$GW_ADDR$URL_PATH" "$GW_PID" "$5" "1 16 64"
  stop_gateway
}

for stream in $([ "$LOAD$TABLE" = 11 ] && echo 0) $([ "$LOAD$STREAMING$TABLE" = 111 ] && echo 1); do
  warm=${WARMUP:-3s}; [ "$stream" = 1 ] && warm=0
  WARMUP=$warm load direct "http://$MOCK_ADDR$URL_PATH" "$MOCK_PID" "$stream" "1 16 64"
  WARMUP=$warm load proxy "http://$PROXY_ADDR$URL_PATH" "$PROXY_PID" "$stream" "1 16 64"
  gateway gateway gateway.yaml off "" "$stream" "$warm"
  [ "$stream" = 0 ] && gateway gateway-limits gateway-limits.yaml off "" "$stream" "$warm"
  [ -n "$REDIS" ] && gateway gateway-redis gateway-limits.yaml off "$REDIS" "$stream" "$warm"
  if [ "$stream" = 0 ] && [[ " $LOGMODES " == *" on "* ]]; then
    gateway gateway-calllog gateway.yaml on "" "$stream" "$warm"
  fi
done

# Time to the first token, streamed, the targets taken in turn on one
# kept-alive connection each (bench/ttft): what the proxy and the gateway
# (no limits; then limits on in Redis) add to the upstream's.
if [ "$LOAD$STREAMING$TABLE" = 111 ]; then
  TTFT_N=${TTFT_N:-2000}
  for gw in "gateway|gateway.yaml|" "gateway-redis|gateway-limits.yaml|$REDIS"; do
    IFS='|' read -r name config redis <<<"$gw"
    [ "$name" = gateway-redis ] && [ -z "$REDIS" ] && continue
    start_gateway "$name" "$config" off "$redis"
    echo "# time to first token, $TTFT_N requests each ($name)"
    "$WORK/ttft" -n "$TTFT_N" direct="http://$MOCK_ADDR$URL_PATH" proxy="http://$PROXY_ADDR$URL_PATH" \
      "$name=http://$GW_ADDR$URL_PATH" | tee -a "$TSV.ttft"
    stop_gateway
  done
fi

# Paired rounds: the ratios the targets are set on, measured with both
# targets up at once and wrk alternating between them (A B, then B A, ...),
# ROUNDS rounds of ROUND at 16 and at 64 connections. A run of the whole
# table takes minutes per target, and this machine's speed drifts by tens
# of percent within minutes; a ratio of two rounds a few seconds apart is
# what the change costs, and the median of the rounds is reported with its
# range. Each round also reads each target's CPU time (utime + stime in
# /proc/PID/stat) around its wrk run: the CPU it spent a request, in µs,
# and B's ÷ A's. Throughput is the targets' own cost mixed with wrk's and
# the upstream's share of the two cores; CPU a request is the target's
# alone, and drifts less from round to round. Each pair: NAME A-target
# B-target STREAM, a target being proxy or CONFIG[@redis].
if [ "$LOAD$PAIRS" = 11 ]; then
  ROUNDS=${ROUNDS:-6}; ROUND=${ROUND:-4s}
  PAIR_ADDRS=(127.0.0.1:18093 127.0.0.1:18094); PAIR_PID=(); PAIR_URL=()
  pair_up() { # pair_up I TARGET: start target I (0 or 1): its URL in PAIR_URL[I], its pid in PAIR_PID[I]
    local i=$1 config=${2%@*} redis=
    [[ $2 == *@redis ]] && redis=$REDIS
    if [ "$2" = proxy ]; then PAIR_PID[i]=$PROXY_PID; PAIR_URL[i]=http://$PROXY_ADDR$URL_PATH; return; fi
    rm -rf "$WORK/pair$i"
    BENCH_LISTEN=${PAIR_ADDRS[i]} BENCH_DATA_DIR=$WORK/pair$i BENCH_CALL_LOG=off BENCH_REDIS=$redis \
      BENCH_UPSTREAM=http://$MOCK_ADDR/v1 "$WORK/tollfree" serve -config "$HERE/$config" >"$WORK/pair$i.log" 2>&1 &
    PAIR_PID[i]=$!; PIDS_STARTED+=("$!")
    wait_up "http://${PAIR_ADDRS[i]}/healthz"
    PAIR_URL[i]=http://${PAIR_ADDRS[i]}$URL_PATH
  }
  HZ=$(getconf CLK_TCK)
  cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
  round() { # round URL CONNS PID: "RPS CPU-µs-a-request" of the target at PID
    local t0 t1 out
    t0=$(cpu_ticks "$3")
    out=$(wrk -t1 -c"$2" -d"$ROUND" --timeout 10s -s "$LUA" "$1" | grep '^RESULT' || true)
    t1=$(cpu_ticks "$3")
    awk -v r="$(result rps "$out")" -v n="$(result requests "$out")" -v d=$((t1 - t0)) -v hz="$HZ" \
      'BEGIN { printf "%s %.1f", (r == "") ? 0 : r, (n > 0) ? d * 1e6 / hz / n : 0 }'
  }
  median() { # median: "M [lowest, highest]" of the numbers on stdin
    sort -n | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2; printf "%.3f [%s, %s]", m, v[1], v[NR]}'
  }
  PAIRS_TXT=$WORK/pairs.txt
  {
    echo "Paired rounds: B ÷ A in rounds of $ROUND, A and B alternating (A B, B A, ...), both up at once;"
    echo "median of $ROUNDS rounds [lowest, highest]: requests a second, and CPU a request (each"
    echo "target's utime + stime over the requests wrk counted)."
    echo
    echo "| ratio | A | B | stream | 16 conns | 64 conns | CPU a request, B ÷ A: 16 conns | 64 conns |"
    echo "|---|---|---|---|---|---|---|---|"
  } >"$PAIRS_TXT"
  for p in "limits-on÷no-limits gateway.yaml gateway-limits.yaml 0" \
           "redis÷local gateway-limits.yaml gateway-limits.yaml@redis 0" \
           "streamed÷proxy proxy gateway.yaml 1" \
           "streamed-redis÷proxy proxy gateway-limits.yaml@redis 1"; do
    read -r pname ta tb pstream <<<"$p"
    if [[ "$ta$tb" == *@redis* ]] && [ -z "$REDIS" ]; then continue; fi
    if [ "$pstream" = 1 ] && [ "$STREAMING" != 1 ]; then continue; fi
    export MODEL=gpt-4o-mini STREAM=$pstream
    pair_up 0 "$ta"; pair_up 1 "$tb"; ua=${PAIR_URL[0]}; ub=${PAIR_URL[1]}
    wrk -t1 -c16 -d2s -s "$LUA" "$ua" >/dev/null; wrk -t1 -c16 -d2s -s "$LUA" "$ub" >/dev/null
    cells=(); cpus=()
    for c in 16 64; do
      ratios=(); cpuratios=()
      for r in $(seq "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then ra=$(round "$ua" "$c" "${PAIR_PID[0]}"); rb=$(round "$ub" "$c" "${PAIR_PID[1]}")
        else rb=$(round "$ub" "$c" "${PAIR_PID[1]}"); ra=$(round "$ua" "$c" "${PAIR_PID[0]}"); fi
        read -r a ca <<<"$ra"; read -r b cb <<<"$rb"
        ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", (a > 0) ? b / a : 0 }')")
        cpuratios+=("$(awk -v a="$ca" -v b="$cb" 'BEGIN { printf "%.3f", (a > 0) ? b / a : 0 }')")
        printf 'pair\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pname" "$c" "$r" "$a" "$b" "${ratios[-1]}" "$ca" "$cb" "${cpuratios[-1]}" | tee -a "$TSV.pairs"
      done
      cells+=("$(printf '%s\n' "${ratios[@]}" | median)")
      cpus+=("$(printf '%s\n' "${cpuratios[@]}" | median)")
    done
    echo "| $pname | $ta | $tb | $pstream | ${cells[0]} | ${cells[1]} | ${cpus[0]} | ${cpus[1]} |" >>"$PAIRS_TXT"
    for i in 0 1; do
      [ "${PAIR_PID[$i]}" = "$PROXY_PID" ] && continue
      kill "${PAIR_PID[$i]}"; wait "${PAIR_PID[$i]}" 2>/dev/null || true
    done
  done
  cat "$PAIRS_TXT"
fi

if [ "$PROFILE" = 1 ]; then
  start_gateway gateway-profiled gateway.yaml off "" -pprof "$PPROF_ADDR"
  lua=$LUA
  # CPU: 10 s of profile inside 14 s of load at 64 connections.
  MODEL=gpt-4o-mini STREAM=0 wrk -t1 -c64 -d14s -s "$lua" "http://$GW_ADDR$URL_PATH" >"$WORK/wrk-cpu.out" &
  wrkpid=$!
  sleep 2
  curl -s -o "$OUTDIR/cpu-$STAMP.pprof" "http://$PPROF_ADDR/debug/pprof/profile?seconds=10"
  wait "$wrkpid"
  # CPU of streamed answers: 10 s of profile inside 14 s at 16 connections.
  MODEL=gpt-4o-mini STREAM=1 wrk -t1 -c16 -d14s -s "$lua" "http://$GW_ADDR$URL_PATH" >"$WORK/wrk-cpu-stream.out" &
  wrkpid=$!
  sleep 2
  curl -s -o "$OUTDIR/cpu-stream-$STAMP.pprof" "http://$PPROF_ADDR/debug/pprof/profile?seconds=10"
  wait "$wrkpid"
  # Allocations: the difference between two allocation profiles around a
  # counted load, divided by the requests wrk made.
  curl -s -o "$OUTDIR/allocs0-$STAMP.pprof" "http://$PPROF_ADDR/debug/pprof/allocs"
  MODEL=gpt-4o-mini STREAM=0 wrk -t1 -c16 -d5s -s "$lua" "http://$GW_ADDR$URL_PATH" >"$WORK/wrk-allocs.out"
  curl -s -o "$OUTDIR/allocs-$STAMP.pprof" "http://$PPROF_ADDR/debug/pprof/allocs"
  reqs=$(sed -n 's/^RESULT requests=\([0-9]*\).*/\1/p' "$WORK/wrk-allocs.out")
  stop_gateway
  {
    echo "# CPU, 64 connections, call_log off (go tool pprof -top)"
    go tool pprof -top -nodecount=40 "$WORK/tollfree" "$OUTDIR/cpu-$STAMP.pprof" 2>/dev/null
    echo
    echo "# CPU by cumulative time"
    go tool pprof -top -cum -nodecount=60 "$WORK/tollfree" "$OUTDIR/cpu-$STAMP.pprof" 2>/dev/null
    echo
    echo "# CPU, streamed answers, 16 connections, call_log off"
    go tool pprof -top -nodecount=30 "$WORK/tollfree" "$OUTDIR/cpu-stream-$STAMP.pprof" 2>/dev/null
    echo
    echo "# CPU, streamed answers, by cumulative time"
    go tool pprof -top -cum -nodecount=60 "$WORK/tollfree" "$OUTDIR/cpu-stream-$STAMP.pprof" 2>/dev/null
    echo
    echo "# allocations during $reqs requests at 16 connections (alloc_space, alloc_objects)"
    go tool pprof -top -sample_index=alloc_space -nodecount=40 -base "$OUTDIR/allocs0-$STAMP.pprof" "$WORK/tollfree" "$OUTDIR/allocs-$STAMP.pprof" 2>/dev/null
    echo
    go tool pprof -top -sample_index=alloc_objects -nodecount=40 -base "$OUTDIR/allocs0-$STAMP.pprof" "$WORK/tollfree" "$OUTDIR/allocs-$STAMP.pprof" 2>/dev/null
    echo "requests=$reqs"
  } >"$OUTDIR/profile-$STAMP.txt"
  echo "# profile: $OUTDIR/profile-$STAMP.txt"
fi

[ "$LOAD" = 1 ] || { rm -f "$TSV.start"; exit 0; }
if [ "$TABLE" = 1 ]; then
  cat "$TSV.start" >>"$TSV"; rm -f "$TSV.start"
  "$HERE/table.sh" "$TSV" >"$MD"
else
  rm -f "$TSV.start"; : >"$MD"
fi
if [ -s "${PAIRS_TXT:-}" ]; then
  { echo; cat "$PAIRS_TXT"; } >>"$MD"
  mv "$TSV.pairs" "$OUTDIR/pairs-$STAMP.tsv"
fi
if [ -s "$TSV.ttft" ]; then
  { echo; echo "Time to first token (bench/ttft, ms; + = added to direct):"; echo; echo '```'; cat "$TSV.ttft"; echo '```'; } >>"$MD"
  mv "$TSV.ttft" "$OUTDIR/ttft-$STAMP.txt"
fi
echo "# results: $TSV"
echo "# table:   $MD"
cat "$MD"
