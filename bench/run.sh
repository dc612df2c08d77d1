#!/usr/bin/env bash
# Measure tollfree's own cost: wrk with bench/chat.lua against the fixed
# upstream (bench/upstream) called directly, then through `tollfree serve`
# in front of it, in the same run, on loopback. Needs Go and wrk only.
#
# usage: bench/run.sh            (from anywhere; takes about 9 minutes)
#
# environment (all optional):
#   OUTDIR     where results go                   (default <repo>/bench/results)
#   LOGMODES   call_log settings to measure       (default "off on")
#   STREAMING  1 = also measure streamed answers  (default 1)
#   PROFILE    1 = also take a CPU and an allocation profile of the gateway
#              at 64 connections, call_log off (default 1)
#   LOAD       0 = skip the load runs, only profile  (default 1)
#   DURATION   wrk's run at each level            (default 10s)
#   WARMUP     a warm-up at 16 connections first  (default 3s; none streaming)
#   THREADS    wrk threads, at most the connections (default 1)
#
# Writes $OUTDIR/bench-<stamp>.tsv (a row per target and level, plus the
# gateway's RSS right after start), bench-<stamp>.md (the tables with
# ratios and deltas against direct), and with PROFILE=1 cpu-<stamp>.pprof,
# allocs0-<stamp>.pprof and allocs-<stamp>.pprof (allocations before and
# after a counted load: `go tool pprof -base allocs0 allocs` is that load's)
# and profile-<stamp>.txt, their top lists; cpu-stream-<stamp>.pprof for
# streamed answers at 16 connections.
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
LOAD=${LOAD:-1}
MOCK_ADDR=127.0.0.1:18080
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

(cd "$ROOT" && go build -o "$WORK/upstream" ./bench/upstream && go build -o "$WORK/tollfree" ./cmd/tollfree)

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
start_gateway() { # start_gateway CALL_LOG [extra serve flags]
  local log=$1; shift
  local path=off # call_log takes "off" or a file
  [ "$log" = on ] && path=$WORK/data/calls.jsonl
  rm -rf "$WORK/data"
  BENCH_LISTEN=$GW_ADDR BENCH_DATA_DIR=$WORK/data BENCH_CALL_LOG=$path \
    BENCH_UPSTREAM=http://$MOCK_ADDR/v1 \
    "$WORK/tollfree" serve -config "$HERE/gateway.yaml" "$@" >"$WORK/gateway.log" 2>&1 &
  GW_PID=$!; PIDS_STARTED+=("$GW_PID")
  wait_up "http://$GW_ADDR/healthz"
  sleep 1
  echo "# gateway call_log=$log pid $GW_PID idle RSS right after start: $(rss_kb "$GW_PID") KiB"
  printf 'gateway-start\t-\t-\t-\t-\t-\t-\t-\t%s\t-\tcall_log=%s\n' "$(rss_kb "$GW_PID")" "$log" >>"$TSV.start"
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
for stream in $([ "$LOAD" = 1 ] && echo 0) $([ "$LOAD$STREAMING" = 11 ] && echo 1); do
  warm=${WARMUP:-3s}; [ "$stream" = 1 ] && warm=0
  WARMUP=$warm load direct "http://$MOCK_ADDR$URL_PATH" "$MOCK_PID" "$stream" "1 16 64"
  for log in $LOGMODES; do
    start_gateway "$log"
    WARMUP=$warm load "gateway-log-$log" "http://$GW_ADDR$URL_PATH" "$GW_PID" "$stream" "1 16 64"
    stop_gateway
  done
done

if [ "$PROFILE" = 1 ]; then
  start_gateway off -pprof "$PPROF_ADDR"
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
cat "$TSV.start" >>"$TSV"; rm -f "$TSV.start"
"$HERE/table.sh" "$TSV" >"$MD"
echo "# results: $TSV"
echo "# table:   $MD"
cat "$MD"
