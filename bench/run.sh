#!/usr/bin/env bash
# Measure tollfree's own cost: the shared load harness (../shared/bench) run
# against the fixed mockup upstream called directly, then through
# `tollfree serve` in front of it, in the same run, on loopback.
#
# usage: bench/run.sh            (from anywhere; takes about 9 minutes)
#
# environment (all optional):
#   SHARED     the shared harness                 (default <repo>/../shared/bench)
#   OUTDIR     where results go                   (default <repo>/bench/results)
#   LOGMODES   call_log settings to measure       (default "off on")
#   STREAMING  1 = also measure streamed answers  (default 1)
#   PROFILE    1 = also take a CPU and an allocation profile of the gateway
#              at 64 connections, call_log off (default 1)
#   LOAD       0 = skip the load runs, only profile  (default 1)
#   DURATION, WARMUP, THREADS: passed to the shared run.sh
#
# Writes $OUTDIR/bench-<stamp>.tsv (the shared run.sh's rows, plus the
# gateway's RSS right after start), bench-<stamp>.md (the tables with
# ratios and deltas against direct), and with PROFILE=1 cpu-<stamp>.pprof,
# allocs0-<stamp>.pprof and allocs-<stamp>.pprof (allocations before and
# after a counted load: `go tool pprof -base allocs0 allocs` is that load's)
# and profile-<stamp>.txt, their top lists; cpu-stream-<stamp>.pprof for
# streamed answers at 16 connections.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared/bench}
SHARED=$(cd "$SHARED" && pwd)
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

# The mockup is built from a copy: its code is the shared harness's, not ours.
cp -r "$SHARED/mockup" "$WORK/mockup"
(cd "$WORK/mockup" && GOWORK=off GOFLAGS= go build -o "$WORK/mockup-bin" .)
(cd "$ROOT" && go build -o "$WORK/tollfree" ./cmd/tollfree)

wait_up() { # wait_up URL: until it answers at all, 10 s at most
  for _ in $(seq 100); do
    if curl -s -o /dev/null -m 1 "$1"; then return 0; fi
    sleep 0.1
  done
  echo "nothing answers at $1" >&2; exit 1
}
rss_kb() { ps -o rss= -p "$1" | tr -d ' '; }

"$WORK/mockup-bin" -addr "$MOCK_ADDR" >"$WORK/mockup.log" 2>&1 &
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

shared() { # shared NAME URL PID STREAM CONNS
  OUT=$TSV PIDS=$3 STREAM=$4 CONNS=$5 MODEL=gpt-4o-mini "$SHARED/run.sh" "$1" "$2"
}

echo "# machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr), $(go version | cut -d' ' -f3), wrk $(wrk -v 2>&1 | head -1 | cut -d' ' -f2)"
for stream in $([ "$LOAD" = 1 ] && echo 0) $([ "$LOAD$STREAMING" = 11 ] && echo 1); do
  warm=${WARMUP:-3s}; [ "$stream" = 1 ] && warm=0
  WARMUP=$warm shared direct "http://$MOCK_ADDR$URL_PATH" "$MOCK_PID" "$stream" "1 16 64"
  for log in $LOGMODES; do
    start_gateway "$log"
    WARMUP=$warm shared "gateway-log-$log" "http://$GW_ADDR$URL_PATH" "$GW_PID" "$stream" "1 16 64"
    stop_gateway
  done
done

if [ "$PROFILE" = 1 ]; then
  start_gateway off -pprof "$PPROF_ADDR"
  lua=$SHARED/chat.lua
  # CPU: 10 s of profile inside 14 s of load at 64 connections.
  MODEL=gpt-4o-mini wrk -t1 -c64 -d14s -s "$lua" "http://$GW_ADDR$URL_PATH" >"$WORK/wrk-cpu.out" &
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
  MODEL=gpt-4o-mini wrk -t1 -c16 -d5s -s "$lua" "http://$GW_ADDR$URL_PATH" >"$WORK/wrk-allocs.out"
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
