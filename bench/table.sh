#!/usr/bin/env bash
# Turn a TSV written by bench/run.sh into markdown tables: one per mode
# (non-streaming, streaming), each target against direct in the same run.
# usage: bench/table.sh FILE.tsv
set -euo pipefail
awk -F'\t' '
NR == 1 { next }
$1 == "gateway-start" { start[$11] = $9; next }
{
  key = $2 SUBSEP $3
  if ($1 == "direct") { drps[key] = $4; dp50[key] = $5; dp99[key] = $6 }
  n = ++rows
  name[n] = $1; st[n] = $2; c[n] = $3; rps[n] = $4; p50[n] = $5; p99[n] = $6
  bad[n] = $7 + $8; rss[n] = $10; date = $11
}
END {
  print "Run of " date ". Δ = gateway minus direct; ratio = gateway RPS ÷ direct RPS;"
  print "RSS = resident memory of the target, maximum under load (direct: the upstream)."
  for (s = 0; s <= 1; s++) {
    print ""
    print (s ? "Streaming (20 chunks, latency to the last chunk):" : "Non-streaming:")
    print ""
    print "| target | conns | RPS | p50 ms | p99 ms | Δp50 ms | Δp99 ms | ratio | RSS MB | errors |"
    print "|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= rows; i++) {
      if (st[i] != s) continue
      key = st[i] SUBSEP c[i]
      if (name[i] == "direct") { d1 = "–"; d2 = "–"; r = "1" }
      else {
        d1 = sprintf("%+.3f", p50[i] - dp50[key]); d2 = sprintf("%+.2f", p99[i] - dp99[key])
        r = (drps[key] > 0) ? sprintf("%.3f", rps[i] / drps[key]) : "?"
      }
      printf "| %s | %s | %.0f | %.3f | %.2f | %s | %s | %s | %.0f | %d |\n", name[i], c[i], rps[i], p50[i], p99[i], d1, d2, r, rss[i] / 1024, bad[i]
    }
  }
  print ""
  for (m in start) printf "Gateway RSS right after start, idle (%s): %.1f MB\n", m, start[m] / 1024
}' "$1"
