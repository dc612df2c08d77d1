package sim

import (
	"slices"
	"sort"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// PolicyOptimum is not played: it is computed with hindsight (Optimum).
const PolicyOptimum = "optimum (bound)"

// Optimum is an upper bound on the questions any scheduler could have
// answered by a model on the trace, knowing every arrival in advance,
// under every limit the emulator enforces (the tiers ps) with each
// question answered within deadline of its arrival. It is a maximum flow
// over one-minute slots, computed once, not played:
//
//	source -> question (capacity 1)
//	       -> (route, minute) for each route that can take it and each
//	          minute its wait [arrival, arrival+deadline) touches
//	       -> (route, day) or (account, minute) -> (account, day) -> sink
//
// where a node's capacity is its requests limit, and its token limit
// turned into a count: the most of the questions that could land there
// whose tokens fit under it, the cheapest first, a question's tokens
// counted as its provider counts them (chargeOn: the prompt alone on
// Gemini, whose limits count input tokens).
//
// Why it is an upper bound: take any schedule the emulator accepts and
// send one unit from each question it answered, along the minute (counted
// from Start) and the route it was answered in. The unit passes every
// capacity: each minute slot and each day is one of the windows the
// emulator checks (a minute window slides, so it holds over any fixed
// minute; a day is a calendar day of the route's reset, or for a rolling
// day the 24 hours from Start), so the questions it holds are at most its
// requests limit, and their tokens fit its token limit, so they are at
// most as many as the cheapest questions that fit. So that schedule is a
// flow, and the maximum flow is at least its count. Some limits are
// relaxed, never tightened: a sliding window is checked only at whole
// minutes and days, fractional tokens count as whole questions, and an
// account's minute limit is left out for a model that has its own day
// caps (to keep the network a tree). The bound is exact where those do
// not bite: request limits only, or questions of one size
// (TestOptimumExact).
//
// A flow of integral capacities has an integral maximum (Dinic's
// algorithm finds it), so the bound is a count of questions with a
// witness: which route answers each, and when.
func Optimum(tr []Arrival, start time.Time, deadline time.Duration, routes []string, ps []emulator.Preset) *Result {
	type tier struct {
		flavor         string
		acct           string
		model, account emulator.Limits
	}
	tierOf := map[string]tier{}
	for _, p := range ps {
		for _, m := range p.Models {
			tierOf[p.Provider.Name+"/"+m.ID] = tier{flavor: p.Provider.Flavor, acct: p.Provider.Name, model: m.Limits, account: p.Provider.Limits}
		}
	}
	// A question's tokens as each flavor charges them (chargeOn).
	costs := map[string][]int{}
	costOf := func(flavor string) []int {
		if c, ok := costs[flavor]; ok {
			return c
		}
		c := make([]int, len(tr))
		for i, a := range tr {
			c[i] = chargeOn(flavor, a)
		}
		costs[flavor] = c
		return c
	}
	slotOf := func(t time.Duration) int { return int(t / time.Minute) }
	slotStart := func(s int) time.Time { return start.Add(time.Duration(s) * time.Minute) }

	// Which questions could land in each (route, minute), (account,
	// minute), (route, day) and (account, day).
	type key struct {
		who  string
		slot int
		day  bool
	}
	fits := func(l emulator.Limits, c int) bool {
		return (l.TPM == 0 || c <= l.TPM) && (l.TPD == 0 || c <= l.TPD)
	}
	members := map[key][]int{}
	add := func(k key, q int) {
		if m := members[k]; len(m) == 0 || m[len(m)-1] != q {
			members[k] = append(m, q)
		}
	}
	type hop struct {
		q, slot int
		route   string
	}
	var hops []hop
	for q, a := range tr {
		first, last := slotOf(a.At), slotOf(a.At+deadline-1)
		// In reverse: a node's edges are tried last added first, so the
		// witness tries the chain's routes in order.
		for _, id := range slices.Backward(routes) {
			t, ok := tierOf[id]
			if !ok || !fits(t.model, costOf(t.flavor)[q]) || !fits(t.account, costOf(t.flavor)[q]) {
				continue
			}
			for s := first; s <= last; s++ {
				hops = append(hops, hop{q: q, slot: s, route: id})
				day := dayOf(t.flavor, start, slotStart(s))
				add(key{who: id, slot: s}, q)
				add(key{who: t.acct, slot: s}, q)
				add(key{who: id, slot: day, day: true}, q)
				add(key{who: t.acct, slot: day, day: true}, q)
			}
		}
	}
	unlimited := len(tr) + 1
	capOf := func(k key, flavor string, requests, tokenLimit int) int {
		c := unlimited
		if requests > 0 {
			c = requests
		}
		if tokenLimit > 0 {
			cost := costOf(flavor)
			cs := make([]int, 0, len(members[k]))
			for _, q := range members[k] {
				cs = append(cs, cost[q])
			}
			sort.Ints(cs)
			n, sum := 0, 0
			for _, x := range cs {
				if sum+x > tokenLimit {
					break
				}
				sum += x
				n++
			}
			c = min(c, n)
		}
		return c
	}
	minuteLimited := func(l emulator.Limits) bool { return l.RPM > 0 || l.TPM > 0 }
	dayLimited := func(l emulator.Limits) bool { return l.RPD > 0 || l.TPD > 0 }

	g := newFlowNet()
	src, sink := g.node(), g.node()
	nodes := map[key]int{}
	// The tree above each (route, minute), built as the hops need it.
	var chainTo func(k key, t tier, level string) int
	chainTo = func(k key, t tier, level string) int {
		if n, ok := nodes[k]; ok {
			return n
		}
		n := g.node()
		nodes[k] = n
		var c, up int
		switch level {
		case "route-minute":
			c = capOf(k, t.flavor, t.model.RPM, t.model.TPM)
			day := dayOf(t.flavor, start, slotStart(k.slot))
			switch {
			case minuteLimited(t.account) && !dayLimited(t.model):
				up = chainTo(key{who: t.acct, slot: k.slot}, t, "account-minute")
			case dayLimited(t.model):
				up = chainTo(key{who: k.who, slot: day, day: true}, t, "route-day")
			case dayLimited(t.account):
				up = chainTo(key{who: t.acct, slot: day, day: true}, t, "account-day")
			default:
				up = sink
			}
		case "account-minute":
			c = capOf(k, t.flavor, t.account.RPM, t.account.TPM)
			up = sink
			if dayLimited(t.account) {
				up = chainTo(key{who: t.acct, slot: dayOf(t.flavor, start, slotStart(k.slot)), day: true}, t, "account-day")
			}
		case "route-day":
			c = capOf(k, t.flavor, t.model.RPD, t.model.TPD)
			up = sink
			if dayLimited(t.account) {
				up = chainTo(key{who: t.acct, slot: k.slot, day: true}, t, "account-day")
			}
		case "account-day":
			c = capOf(k, t.flavor, t.account.RPD, t.account.TPD)
			up = sink
		}
		g.edge(n, up, c)
		return n
	}
	qNode := make([]int, len(tr))
	for q := range tr {
		qNode[q] = g.node()
		g.edge(src, qNode[q], 1)
	}
	hopEdge := make([]int, len(hops))
	for i, h := range hops {
		n := chainTo(key{who: h.route, slot: h.slot}, tierOf[h.route], "route-minute")
		hopEdge[i] = g.edge(qNode[h.q], n, 1)
	}
	g.maxFlow(src, sink)

	bins, capped := binsFor(tr), cappedRoutes(ps, tr)
	r := bins.result()
	r.Policy = PolicyOptimum
	answered := make([]bool, len(tr))
	for i, h := range hops {
		if g.flow(hopEdge[i]) == 0 {
			continue
		}
		answered[h.q] = true
		r.ByRoute[h.route]++
		if capped[h.route] {
			r.CappedBin[bins.index(tr[h.q].At)]++
		}
	}
	for q, a := range tr {
		hr := bins.index(a.At)
		if answered[q] {
			r.ByModel++
			r.ByModelBin[hr]++
		} else {
			r.ByFallback++
			r.FallbackBin[hr]++
		}
	}
	return r
}

// dayOf numbers the day a moment falls in, by the emulator's rule for the
// flavor (emulator.Reset): a rolling day counted in 24 hours from start
// (the emulator's rolling window holds over each of them), else the
// calendar day at midnight America/Los_Angeles (Gemini) or UTC.
func dayOf(flavor string, start, t time.Time) int {
	switch flavor {
	case emulator.FlavorGroq, emulator.FlavorGitHub:
		return int(t.Sub(start) / (24 * time.Hour))
	}
	loc := time.UTC
	if flavor == emulator.FlavorGemini {
		loc = start.Location()
		if la, err := time.LoadLocation("America/Los_Angeles"); err == nil {
			loc = la
		}
	}
	y, m, d := t.In(loc).Date()
	return int(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// cappedRoutes returns the routes of the tiers whose daily cap, the
// model's or the account's, holds fewer questions than the trace brings in
// a day (a token cap counted at the trace's mean tokens a question): the
// day caps a day of this trace can spend, which pacing is about. Gemma's
// 14,400 requests a day are not one of them on a day of 3,000 questions.
func cappedRoutes(ps []emulator.Preset, tr []Arrival) map[string]bool {
	out := map[string]bool{}
	if len(tr) == 0 {
		return out
	}
	days := int(tr[len(tr)-1].At/(24*time.Hour)) + 1
	perDay := float64(len(tr)) / float64(days)
	sum := 0
	for _, a := range tr {
		sum += tokens(a)
	}
	mean := float64(sum) / float64(len(tr))
	holds := func(l emulator.Limits) bool {
		return l.RPD > 0 && float64(l.RPD) < perDay || l.TPD > 0 && float64(l.TPD)/mean < perDay
	}
	for _, p := range ps {
		for _, m := range p.Models {
			if holds(m.Limits) || holds(p.Provider.Limits) {
				out[p.Provider.Name+"/"+m.ID] = true
			}
		}
	}
	return out
}
