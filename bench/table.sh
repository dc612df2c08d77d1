#!/usr/bin/env bash
# Turn a TSV written by bench/run.sh into markdown tables: one per mode
# (non-streaming, streaming), each target against direct and against the
# bare proxy in the same run, then the ratios issue 18 sets targets for.
# usage: bench/table.sh FILE.tsv
set -euo pipefail
awk -F'\t' '
NR == 1 { next }
$1 == "gateway-start" { start[$11] = $9; next }
{
  k = $1 SUBSEP $2 SUBSEP $3
  R[k] = $4; P50[k] = $5; P99[k] = $6
  n = ++rows
  name[n] = $1; st[n] = $2; c[n] = $3; rps[n] = $4; p50[n] = $5; p99[n] = $6
  bad[n] = $7 + $8; rss[n] = $10; date = $11
}
function ratio(a, b) { return (a != "" && b > 0) ? sprintf("%.3f", a / b) : "–" }
function has(t, s, c) { return ((t SUBSEP s SUBSEP c) in R) }
END {
  print "Run of " date ". Δ = target minus direct; ratio = target RPS ÷ direct RPS;"
  print "÷ proxy = target RPS ÷ the RPS of the bare reverse proxy at the same level;"
  print "RSS = resident memory of the target, maximum under load (direct: the upstream)."
  for (s = 0; s <= 1; s++) {
    print ""
    print (s ? "Streaming (20 chunks, latency to the last chunk):" : "Non-streaming:")
    print ""
    print "| target | conns | RPS | p50 ms | p99 ms | Δp50 ms | Δp99 ms | ratio | ÷ proxy | RSS MB | errors |"
    print "|---|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= rows; i++) {
      if (st[i] != s) continue
      d = "direct" SUBSEP s SUBSEP c[i]; p = "proxy" SUBSEP s SUBSEP c[i]
      if (name[i] == "direct") { d1 = "–"; d2 = "–"; r = "1" }
      else { d1 = sprintf("%+.3f", p50[i] - P50[d]); d2 = sprintf("%+.2f", p99[i] - P99[d]); r = ratio(rps[i], R[d]) }
      rp = (name[i] == "direct" || name[i] == "proxy") ? "–" : ratio(rps[i], R[p])
      printf "| %s | %s | %.0f | %.3f | %.2f | %s | %s | %s | %s | %.0f | %d |\n", name[i], c[i], rps[i], p50[i], p99[i], d1, d2, r, rp, rss[i] / 1024, bad[i]
    }
  }
  print ""
  print "Issue 18 targets (ratios of RPS in this run):"
  print ""
  print "| what | target | 1 conn | 16 conns | 64 conns |"
  print "|---|---|---|---|---|"
  line("no limits ÷ bare proxy", "≥ 1", "gateway", "proxy", 0)
  line("limits on ÷ no limits (local state)", "≥ 0.95", "gateway-limits", "gateway", 0)
  line("Redis ÷ local (limits on)", "≥ 0.8 at 16, 64", "gateway-redis", "gateway-limits", 0)
  line("streamed ÷ bare proxy (no limits)", "≥ 0.9 at 16", "gateway", "proxy", 1)
  line("streamed, Redis and limits ÷ bare proxy", "–", "gateway-redis", "proxy", 1)
  if (has("gateway-redis", 0, 1) && has("gateway-limits", 0, 1))
    printf "\np50 at one connection, Redis minus local (limits on): %+.3f ms (target ≤ +0.15)\n", P50["gateway-redis" SUBSEP 0 SUBSEP 1] - P50["gateway-limits" SUBSEP 0 SUBSEP 1]
  printf "\nRSS at 64 connections (target < 30 MB):"
  for (t in seen) delete seen[t]
  for (i = 1; i <= rows; i++) if (c[i] == 64 && name[i] != "direct" && !((name[i] SUBSEP st[i]) in seen)) {
    seen[name[i] SUBSEP st[i]] = 1
    printf " %s%s %.1f MB;", name[i], (st[i] ? " streamed" : ""), rss[i] / 1024
  }
  print ""
  print ""
  for (m in start) printf "RSS right after start, idle (%s): %.1f MB\n", m, start[m] / 1024
}
function line(what, target, a, b, s,    c1, c2, c3) {
  if (!has(a, s, 16) || !has(b, s, 16)) return
  c1 = ratio(R[a SUBSEP s SUBSEP 1], R[b SUBSEP s SUBSEP 1])
  c2 = ratio(R[a SUBSEP s SUBSEP 16], R[b SUBSEP s SUBSEP 16])
  c3 = ratio(R[a SUBSEP s SUBSEP 64], R[b SUBSEP s SUBSEP 64])
  printf "| %s | %s | %s | %s | %s |\n", what, target, c1, c2, c3
}' "$1"
