package e2e_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"

	"github.com/tollfree/tollfree/config"
)

// unlimitedProviders is emulatedProviders with plain's route and its
// provider unlimited, so that only the caller limits refuse.
const unlimitedProviders = `
providers:
  groq:
    preset: groq
    base_url: EMU/groq/v1
    api_key: ${GROQ_API_KEY}
    models:
      llama-3.1-8b-instant: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
`

// TestOwnerReserveUnderLoad is a bounded load run on loopback (issue 12):
// 60 visitors ask 5 questions each, 300 in all, while the owner asks 20,
// spread among them, 32 at a time over two gateways sharing one Redis. The
// site's day is 200 questions, 20 of them the owner's reserve. Visitors
// stop once the site's count reaches 180, and the owner gets every one of
// its questions answered. The figures are logged:
//
//	go test -run TestOwnerReserveUnderLoad -v .
func TestOwnerReserveUnderLoad(t *testing.T) {
	checkLeaks(t)
	const (
		visitors, each, owners = 60, 5, 20
		siteDay, reserve       = 200, 20
		workers                = 16 // per instance
	)
	cfg := behindProxy + "admin_token: ${TOLLFREE_ADMIN_TOKEN}\n" +
		fmt.Sprintf("callers: {per_hour: %d, site_day: %d, reserve: %d}\n", each, siteDay, reserve) + fairChains
	p := newPairWith(t, stackOptions{config: cfg, env: fairEnv, providers: unlimitedProviders})
	if l := p.in[0].plan.Routes["groq/llama-3.1-8b-instant"].Limits; l != (config.Limits{}) {
		t.Fatalf("the route has limits %+v: the run would measure them, not the site's", l)
	}

	jobs := make([]ask, 0, visitors*each+owners)
	for v := range visitors {
		for range each {
			jobs = append(jobs, ask{from: visitorAddr(fmt.Sprint("load-", v))})
		}
	}
	for range owners {
		jobs = append(jobs, ask{auth: fairAdmin})
	}
	rand.New(rand.NewPCG(12, 12)).Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	queue := make(chan ask, len(jobs))
	for _, j := range jobs {
		queue <- j
	}
	close(queue)

	var (
		mu     sync.Mutex // guards counts
		counts = map[string]int{}
		wg     sync.WaitGroup
	)
	for _, in := range p.in {
		for range workers {
			wg.Go(func() {
				for a := range queue {
					r := send(t, in.srv.URL, a)
					who := "visitor"
					if a.auth != "" {
						who = "owner"
					}
					what := fmt.Sprint(r.status)
					switch r.status {
					case http.StatusOK:
						what = "served"
					case http.StatusTooManyRequests:
						what = "429 " + r.header.Get("X-Tollfree-Limit")
					}
					mu.Lock()
					counts[who+" "+what]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	vServed, oServed := counts["visitor served"], counts["owner served"]
	t.Logf("site day %d, reserve %d; %d visitor and %d owner requests, %d at a time over 2 instances", siteDay, reserve, visitors*each, owners, 2*workers)
	t.Logf("visitors served %d, visitors refused 429 (site day) %d; owner served %d, owner refused %d; all: %v",
		vServed, counts["visitor 429 site day"], oServed, owners-oServed, counts)
	if oServed != owners {
		t.Errorf("the owner got %d of its %d questions answered", oServed, owners)
	}
	if vServed > siteDay-reserve || vServed+oServed > siteDay {
		t.Errorf("visitors served %d, the owner %d: past the site's day less the reserve", vServed, oServed)
	}
	if vServed < siteDay-reserve-owners {
		t.Errorf("visitors served %d: the site's cap was not reached", vServed)
	}
	if vServed+counts["visitor 429 site day"] != visitors*each {
		t.Errorf("some visitor requests ended otherwise than answered or refused by the site's day: %v", counts)
	}
}
