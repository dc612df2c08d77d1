package sim

// flowNet is a flow network for Dinic's maximum flow: integer capacities,
// each edge stored with its reverse next to it (edge i^1 is i's reverse).
type flowNet struct {
	head          []int // first edge of each node, -1 for none
	to, next, cap []int
	level, iter   []int
}

func newFlowNet() *flowNet { return &flowNet{} }

// node adds a node and returns its index.
func (g *flowNet) node() int {
	g.head = append(g.head, -1)
	return len(g.head) - 1
}

// edge adds an edge from u to v of capacity c and returns its index.
func (g *flowNet) edge(u, v, c int) int {
	i := len(g.to)
	g.to = append(g.to, v, u)
	g.cap = append(g.cap, c, 0)
	g.next = append(g.next, g.head[u], g.head[v])
	g.head[u], g.head[v] = i, i+1
	return i
}

// flow is what passes along edge i.
func (g *flowNet) flow(i int) int { return g.cap[i^1] }

// maxFlow returns the maximum flow from s to t (Dinic: shortest augmenting
// paths in phases, a blocking flow per phase).
func (g *flowNet) maxFlow(s, t int) int {
	n := len(g.head)
	g.level, g.iter = make([]int, n), make([]int, n)
	total := 0
	queue := make([]int, 0, n)
	for {
		for i := range g.level {
			g.level[i] = -1
		}
		g.level[s] = 0
		queue = append(queue[:0], s)
		for k := 0; k < len(queue); k++ {
			u := queue[k]
			for e := g.head[u]; e >= 0; e = g.next[e] {
				if v := g.to[e]; g.cap[e] > 0 && g.level[v] < 0 {
					g.level[v] = g.level[u] + 1
					queue = append(queue, v)
				}
			}
		}
		if g.level[t] < 0 {
			return total
		}
		copy(g.iter, g.head)
		for {
			f := g.push(s, t, int(^uint(0)>>1))
			if f == 0 {
				break
			}
			total += f
		}
	}
}

// push sends up to f along level-increasing edges from u to t.
func (g *flowNet) push(u, t, f int) int {
	if u == t {
		return f
	}
	for ; g.iter[u] >= 0; g.iter[u] = g.next[g.iter[u]] {
		e := g.iter[u]
		v := g.to[e]
		if g.cap[e] <= 0 || g.level[v] != g.level[u]+1 {
			continue
		}
		if d := g.push(v, t, min(f, g.cap[e])); d > 0 {
			g.cap[e] -= d
			g.cap[e^1] += d
			return d
		}
	}
	return 0
}
