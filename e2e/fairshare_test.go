package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tollfree/tollfree/caller"
	"github.com/tollfree/tollfree/emulator"
)

// Issue 12: a free quota is shared by everyone who uses the feature, so
// the operator, not the caller, says who is calling, and no limit can be
// dodged. Each test here drives two gateways on one Redis over real HTTP,
// on a fake clock, turn about.

// fairChains are the chains of these tests: plain answers from a model or
// refuses; site answers by search past the site's daily cap. Their routes
// wait up to a minute, for the tests that keep requests in flight.
const fairChains = `
chains:
  plain:
    routes: [groq/llama-3.1-8b-instant]
    attempt_timeout: 60s
    deadline: 90s
  site:
    routes: [groq/llama-3.3-70b-versatile]
    attempt_timeout: 60s
    deadline: 90s
    fallback: {search: ../examples/content}
`

// The keys and admin token of these tests.
const (
	fairAdmin = "FAKE-admin-token-0123456789"
	fairTeam  = "FAKE-team-key-0123456789"
	fairBot   = "FAKE-bot-key-0123456789"
	fairOwner = "FAKE-owner-key-0123456789"
)

var fairEnv = map[string]string{"TOLLFREE_ADMIN_TOKEN": fairAdmin, "TEAM_KEY": fairTeam, "BOT_KEY": fairBot, "OWNER_KEY": fairOwner,
	"TOLLFREE_VISITOR_SECRET": "FAKE-visitor-secret-0123456789abcdef"}

// behindProxy is the start of a config whose visitors come through a
// proxy on this machine: X-Forwarded-For names them.
const behindProxy = "trusted_proxies: [127.0.0.1]\n"

// TestLimitHour: seed 000's per-visitor hour; the refusal says which
// limit, its value and when it resets, in OpenAI's and Groq's headers.
func TestLimitHour(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, behindProxy+"callers: {per_hour: 3}\n"+fairChains, fairEnv, nil)
	a := ask{from: visitorAddr("a")}
	for i := range 3 {
		p.pass(fmt.Sprintf("question %d", i+1), a)
	}
	streamed := a
	streamed.stream = true
	r := p.limited("4th in the hour, streamed", streamed, "caller hour")
	wantHeaders(t, "4th in the hour", r, map[string]string{
		"Retry-After": "3600", "X-RateLimit-Limit-Requests": "3", "X-RateLimit-Remaining-Requests": "0",
		"X-RateLimit-Reset-Requests": "1h0m0s", "X-RateLimit-Limit-Tokens": "",
	})
	p.pass("another visitor", ask{from: visitorAddr("b")})
	p.clk.Advance(time.Hour)
	p.pass("an hour later", a)
}

// TestLimitDay: seed 000's per-visitor day, a rolling 24 hours.
func TestLimitDay(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, behindProxy+"callers: {per_hour: 10, per_day: 3}\n"+fairChains, fairEnv, nil)
	a := ask{from: visitorAddr("a")}
	for i := range 3 {
		p.pass(fmt.Sprintf("question %d, in hour %d", i+1, i+1), a)
		p.clk.Advance(time.Hour)
	}
	r := p.limited("4th in the day, in a fresh hour", a, "caller day")
	wantHeaders(t, "4th in the day", r, map[string]string{"Retry-After": "75600", "X-RateLimit-Limit-Requests": "3", "X-RateLimit-Reset-Requests": "21h0m0s"})
	p.pass("another visitor", ask{from: visitorAddr("b")})
	p.clk.Set(t0.Add(24 * time.Hour))
	p.pass("24 hours after the first", a)
}

// TestLimitTokensPerDay: a visitor's tokens per day are spent on each
// request's estimate and settled with what the answer used, so the limit
// counts what was really used.
func TestLimitTokensPerDay(t *testing.T) {
	checkLeaks(t)
	const limit = 300
	p := newPair(t, behindProxy+"callers: {tokens_day: 300}\n"+fairChains, fairEnv, nil)
	a := ask{from: visitorAddr("a"), maxTokens: 100}
	answered, used := 0, 0
	var r reply
	for range 20 {
		if r = p.send(a); r.status != http.StatusOK {
			break
		}
		answered++
		var body struct {
			Usage struct {
				TotalTokens int `json:"total_tokens"`
			}
		}
		if err := json.Unmarshal(r.body, &body); err != nil || body.Usage.TotalTokens == 0 {
			t.Fatalf("answer %d has no usage: %s", answered, r.body)
		}
		used += body.Usage.TotalTokens
	}
	t.Logf("answered %d, %d tokens used, of %d a day", answered, used, limit)
	wantLimited(t, "past the day's tokens", r, "caller tokens")
	wantHeaders(t, "past the day's tokens", r, map[string]string{"X-RateLimit-Limit-Tokens": "300", "X-RateLimit-Reset-Tokens": "24h0m0s", "X-RateLimit-Limit-Requests": ""})
	// Each request is estimated at more than a third of the day (100
	// answer tokens and the prompt): counted at the estimate, two would
	// pass; settled with what was used, more do.
	if answered < 4 || used > limit {
		t.Errorf("answered %d using %d tokens; want at least 4 within %d", answered, used, limit)
	}
	p.pass("another visitor", ask{from: visitorAddr("b"), maxTokens: 100})
	p.clk.Advance(24 * time.Hour)
	p.pass("a day later", a)
}

// TestLimitConcurrent: a visitor's requests in flight at once, on either
// instance, are capped; the cap is given back when each answer is over.
func TestLimitConcurrent(t *testing.T) {
	checkLeaks(t)
	slow := map[string]time.Duration{"groq/llama-3.1-8b-instant": 30 * time.Second}
	p := newPair(t, behindProxy+"callers: {concurrent: 2}\n"+fairChains, fairEnv, slow)
	a := ask{from: visitorAddr("a")}
	first, second := p.sendAsync(a), p.sendAsync(a)
	p.waitCalls("groq", "llama-3.1-8b-instant", 2)
	r := p.limited("a third at once", a, "caller concurrent")
	wantHeaders(t, "a third at once", r, map[string]string{"Retry-After": "1", "X-RateLimit-Limit-Requests": "2"})
	other := p.sendAsync(ask{from: visitorAddr("b")})
	p.waitCalls("groq", "llama-3.1-8b-instant", 3)
	p.clk.Advance(30 * time.Second)
	for _, ch := range []<-chan reply{first, second, other} {
		p.wantAnswer("in flight", await(t, "a request in flight", ch))
	}
	third := p.sendAsync(a)
	p.waitCalls("groq", "llama-3.1-8b-instant", 4)
	p.clk.Advance(30 * time.Second)
	p.wantAnswer("once the first two ended", await(t, "the third", third))
}

// TestLimitConcurrentStreams: a stream holds its caller's place until it
// ends, breaks, or its caller goes away, whichever way the answer ends,
// and never longer: a slot that leaked would refuse the next request.
func TestLimitConcurrentStreams(t *testing.T) {
	checkLeaks(t)
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { // runs last, after both gateways shut down
		if err := goleak.Find(leaks); err != nil {
			t.Errorf("goroutines left after shutdown: %v", err)
		}
	})
	p := newPair(t, behindProxy+"callers: {concurrent: 1}\n"+fairChains, fairEnv, nil)
	a := ask{from: visitorAddr("a")}
	st := a
	st.stream = true
	// script scripts the route of plain on the instance the next request
	// goes to.
	script := func(s emulator.Step) {
		p.in[p.n%len(p.in)].emu.Script("groq", "llama-3.1-8b-instant", s)
	}
	// next waits for the last request to be over, and wants the caller's
	// one place free again (on site: plain's route may be resting).
	next := func(what string) {
		t.Helper()
		p.waitIdle()
		p.pass(what+", then another request", ask{chain: "site", from: a.from})
	}

	r := p.send(st)
	if content, _, _ := streamed(t, r.body); r.status != http.StatusOK || content == "" {
		t.Fatalf("a stream: %d %s", r.status, r.body)
	}
	next("a stream read to its end")

	script(emulator.Step{Kind: emulator.StreamCut, After: 1})
	if r := p.send(st); r.status != http.StatusOK || !strings.Contains(string(r.body), "stream_broken") {
		t.Fatalf("a stream cut with no route to continue it: %d %s", r.status, r.body)
	}
	next("a broken stream")
	p.clk.Advance(time.Minute) // past the rest of the route that broke

	// A stream that stalls after its first token, on one instance, holds
	// the caller's place on the other too, until the caller goes away.
	script(emulator.Step{Kind: emulator.StreamStall, After: 1})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := http.DefaultClient.Do(st.request(ctx, p.next().srv.URL))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a stalling stream: %v, %v", resp, err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), `"content"`) {
	}
	p.limited("while a stream is open", a, "caller concurrent")
	cancel()
	resp.Body.Close()
	next("a stream whose caller went away")

	// A caller gone before the first token.
	script(emulator.Step{Kind: emulator.Hang})
	calls := p.calls("groq", "llama-3.1-8b-instant")
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	url := p.next().srv.URL
	go func() {
		resp, err := http.DefaultClient.Do(st.request(ctx, url))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	p.waitCalls("groq", "llama-3.1-8b-instant", calls+1)
	cancel()
	<-done
	next("a caller gone before the first token")
}

// TestLimitBurstMute: seed 004's burst mute: more than 3 requests within
// 10 s mutes the caller for a minute, on every instance, whatever it
// sends meanwhile; others are not affected.
func TestLimitBurstMute(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, behindProxy+"callers: {burst: {count: 3, within: 10s, mute: 1m}}\n"+fairChains, fairEnv, nil)
	a := ask{from: visitorAddr("a")}
	for i := range 3 {
		p.pass(fmt.Sprintf("request %d", i+1), a)
		p.clk.Advance(time.Second)
	}
	// The mute counts in slots of 6 s: it ends between 1m and 1m6s after
	// the slot it began in (t0's), here at t0+66s.
	r := p.limited("a 4th within 10s", a, "caller burst")
	wantHeaders(t, "a 4th within 10s", r, map[string]string{"Retry-After": "63", "X-RateLimit-Limit-Requests": "3"})
	p.clk.Set(t0.Add(30 * time.Second))
	r = p.limited("muted, the burst long over", a, "caller burst")
	wantHeaders(t, "muted", r, map[string]string{"Retry-After": "36"})
	p.pass("another visitor meanwhile", ask{from: visitorAddr("b")})
	p.clk.Set(t0.Add(66 * time.Second))
	p.pass("the mute is over", a)
}

// TestLimitPerChain: a chain's own limits (chains.X.callers) count each
// caller in that chain only.
func TestLimitPerChain(t *testing.T) {
	checkLeaks(t)
	cfg := behindProxy + "callers: {per_hour: 10}\n" + strings.Replace(fairChains, "    fallback: {search: ../examples/content}\n",
		"    fallback: {search: ../examples/content}\n    callers: {per_hour: 2}\n", 1)
	p := newPair(t, cfg, fairEnv, nil)
	a := ask{chain: "site", from: visitorAddr("a")}
	p.pass("site 1", a)
	p.pass("site 2", a)
	p.limited("site 3", a, "chain hour")
	p.pass("the same visitor on another chain", ask{chain: "plain", from: visitorAddr("a")})
	p.pass("another visitor on site", ask{chain: "site", from: visitorAddr("b")})
}

// fairKeys are two keys: team is one caller; bot serves many end users,
// named by the user field, each limited apart and all together.
const fairKeys = `
admin_token: ${TOLLFREE_ADMIN_TOKEN}
gateway_keys:
  - {name: team, key: ${TEAM_KEY}, chains: [plain], limits: {per_hour: 2}}
  - {name: bot, key: ${BOT_KEY}, chains: [plain], narrow: true, limits: {per_day: 3}, user_limits: {per_hour: 2}}
  - {name: me, key: ${OWNER_KEY}, owner: true}
`

// TestLimitPerKey: a key's limits hold whatever its requests' user field
// says, unless the key narrows: then each end user is limited apart, and
// all of them together by the key's limits.
func TestLimitPerKey(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, fairKeys+fairChains, fairEnv, nil)
	p.pass("team, user u1", ask{auth: fairTeam, user: "u1"})
	p.pass("team, user u2", ask{auth: fairTeam, user: "u2"})
	p.limited("team, a new user u3", ask{auth: fairTeam, user: "u3"}, "caller hour")

	alice := ask{auth: fairBot, user: "alice"}
	p.pass("bot's alice 1", alice)
	p.pass("bot's alice 2", alice)
	p.limited("bot's alice 3", alice, "caller hour")
	p.pass("bot's bob: the key's 3rd", ask{auth: fairBot, user: "bob"})
	r := p.limited("bot's carol: the key's 4th", ask{auth: fairBot, user: "carol"}, "key day")
	wantHeaders(t, "the key's day", r, map[string]string{"X-RateLimit-Limit-Requests": "3"})
}

// TestSiteCapOwnerReserve: seed 000's site cap and seed 004's reserve:
// visitors stop at the day less the reserve (a chain with a search
// fallback answers by search, another refuses); the owner (the admin
// token) still gets model answers, up to the whole day.
func TestSiteCapOwnerReserve(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, behindProxy+"admin_token: ${TOLLFREE_ADMIN_TOKEN}\ncallers: {per_hour: 10, site_day: 6, reserve: 2}\n"+fairChains, fairEnv, nil)
	for i := range 4 {
		p.pass(fmt.Sprintf("visitor %d", i+1), ask{from: visitorAddr(fmt.Sprint("v", i))})
	}
	r := p.limited("a 5th visitor", ask{from: visitorAddr("v5")}, "site day")
	wantHeaders(t, "a 5th visitor", r, map[string]string{"X-RateLimit-Limit-Requests": "4"})
	calls := p.calls("groq", "llama-3.3-70b-versatile")
	r = p.send(ask{chain: "site", text: "What projects are there?", from: visitorAddr("v5")})
	if r.status != http.StatusOK || r.header.Get("X-Tollfree-Fallback") != "search" {
		t.Errorf("a 5th visitor on a chain with a search fallback: %d fallback %q %s", r.status, r.header.Get("X-Tollfree-Fallback"), r.body)
	}
	if p.calls("groq", "llama-3.3-70b-versatile") != calls {
		t.Error("a model was called past the site's cap")
	}
	owner := ask{auth: fairAdmin, from: visitorAddr("v0")}
	p.pass("the owner, on the reserve", owner)
	p.pass("the owner, the reserve's last", owner)
	p.limited("the owner past the whole day", owner, "site day")
}

// TestSiteCapOwnerWithKeys: with gateway keys set, the owner is still
// the owner, by the admin token or a key marked owner, and gets through
// the site's cap on the reserve.
func TestSiteCapOwnerWithKeys(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, fairKeys+"callers: {site_day: 5, reserve: 3}\n"+fairChains, fairEnv, nil)
	p.pass("team 1", ask{auth: fairTeam})
	p.pass("team 2", ask{auth: fairTeam})
	p.limited("past the day less the reserve", ask{auth: fairBot, user: "alice"}, "site day")
	p.pass("the admin token", ask{auth: fairAdmin, chain: "site"})
	p.pass("the owner's key", ask{auth: fairOwner})
	p.pass("the admin token again", ask{auth: fairAdmin})
	p.limited("the owner past the whole day", ask{auth: fairOwner}, "site day")
}

// TestWhoIsCallingKeys: a missing or unknown key is a 401, a chain the key
// may not use a 403 (in OpenAI's format), and a key sees only its chains.
func TestWhoIsCallingKeys(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, fairKeys+fairChains, fairEnv, nil)
	for _, tc := range []struct {
		what         string
		a            ask
		status       int
		code, param  string
		wwwAuthorize bool
	}{
		{"no key", ask{}, 401, "invalid_api_key", "", true},
		{"an unknown key", ask{auth: fairTeam + "x"}, 401, "invalid_api_key", "", true},
		{"a chain the key may not use", ask{auth: fairTeam, chain: "site"}, 403, "model_not_allowed", "model", false},
	} {
		r := p.send(tc.a)
		var env struct {
			Error struct{ Message, Code, Param string }
		}
		_ = json.Unmarshal(r.body, &env)
		if r.status != tc.status || env.Error.Code != tc.code || env.Error.Param != tc.param || (r.header.Get("WWW-Authenticate") != "") != tc.wwwAuthorize {
			t.Errorf("%s: %d %s (WWW-Authenticate %q), want %d %s", tc.what, r.status, r.body, r.header.Get("WWW-Authenticate"), tc.status, tc.code)
		}
		if strings.Contains(env.Error.Message, fairTeam[:12]) {
			t.Errorf("%s: the error quotes a key", tc.what)
		}
	}
	p.pass("the team's chain", ask{auth: fairTeam})
	req, _ := http.NewRequest(http.MethodGet, p.next().srv.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+fairTeam)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var models struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != "plain" {
		t.Errorf("/v1/models for the team key: %v %+v, want plain alone", err, models)
	}
}

// TestUserFieldNamesNoOne: a visitor that changes the request's user
// field, or writes X-Tollfree-Caller, at every request is still one
// visitor (issue 12: 5 answers of 5 at per_hour: 1).
func TestUserFieldNamesNoOne(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, "callers: {per_hour: 2}\n"+fairChains, fairEnv, nil)
	for i := range 2 {
		p.pass(fmt.Sprintf("question %d", i+1), ask{user: fmt.Sprint("user-", i), header: map[string]string{"X-Tollfree-Caller": fmt.Sprint("caller-", i)}})
	}
	p.limited("a 3rd with a new user field", ask{user: "user-new"}, "caller hour")
	p.limited("a 3rd with a new X-Tollfree-Caller", ask{header: map[string]string{"X-Tollfree-Caller": "caller-new"}}, "caller hour")
}

// TestSpoofedForwardedFor: X-Forwarded-For (or Forwarded) from a
// connection that is not a trusted proxy names no one.
func TestSpoofedForwardedFor(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, "trusted_proxies: [10.0.0.0/8]\ncallers: {per_hour: 2}\n"+fairChains, fairEnv, nil)
	p.pass("question 1", ask{from: visitorAddr("a")})
	p.pass("question 2", ask{from: visitorAddr("b")})
	p.limited("a 3rd, from yet another address", ask{from: visitorAddr("c")}, "caller hour")
	p.limited("a 3rd, by Forwarded", ask{header: map[string]string{"Forwarded": "for=" + visitorAddr("d")}}, "caller hour")
}

// TestTrustedProxyVisitors: behind a trusted proxy each visitor is
// counted apart, by the address the proxy wrote, and what a visitor wrote
// in the header before it is ignored.
func TestTrustedProxyVisitors(t *testing.T) {
	checkLeaks(t)
	p := newPair(t, behindProxy+"callers: {per_hour: 2}\n"+fairChains, fairEnv, nil)
	a := func(spoof string) ask { return ask{from: spoof + ", " + visitorAddr("a")} }
	p.pass("a, question 1", a(visitorAddr("x")))
	p.pass("a, question 2", a(visitorAddr("y")))
	p.limited("a, question 3, claiming another address", a(visitorAddr("z")), "caller hour")
	p.pass("b, behind the same proxy", ask{from: visitorAddr("b")})
	p.pass("b, question 2", ask{from: visitorAddr("b")})
}

// TestVisitorIDs: visitors behind one address are counted apart by the
// visitor id the gateway signs and issues, in a cookie or a header, once
// the id is a day old; a newer id counts against its address too (issue
// 32); an id it did not sign is ignored.
func TestVisitorIDs(t *testing.T) {
	checkLeaks(t)
	cfg := "visitor_ids: {secret: ${TOLLFREE_VISITOR_SECRET}}\ncallers: {per_hour: 2}\n" + fairChains
	p := newPair(t, cfg, fairEnv, nil)
	issued := func(what string, r reply) *http.Cookie {
		t.Helper()
		p.wantAnswer(what, r)
		resp := http.Response{Header: r.header}
		for _, c := range resp.Cookies() {
			if c.Name == "tollfree_visitor" && c.HttpOnly && c.Value != "" && r.header.Get("X-Tollfree-Visitor") == c.Value {
				return c
			}
		}
		t.Fatalf("%s: no visitor id issued: %v", what, r.header)
		return nil
	}
	one := issued("first visitor, by address", p.send(ask{}))
	p.pass("first visitor, by its new id: the address's 2nd", ask{cookie: one})
	p.limited("first visitor, by its new id: the address's 3rd", ask{cookie: one}, "caller hour")
	p.clk.Advance(caller.NewVisitor + time.Minute) // the id is a day old: it counts on its own
	p.pass("first visitor, by id, 1", ask{cookie: one})
	r := p.send(ask{cookie: one})
	p.wantAnswer("first visitor, by id, 2", r)
	if r.header.Get("Set-Cookie") != "" {
		t.Errorf("a visitor with an id was issued another")
	}
	p.limited("first visitor, by id, 3", ask{cookie: one}, "caller hour")
	p.limited("first visitor, by id in the header", ask{header: map[string]string{"X-Tollfree-Visitor": one.Value}}, "caller hour")
	two := issued("second visitor, same address", p.send(ask{}))
	p.pass("second visitor, by its new id", ask{cookie: two})
	p.limited("second visitor's address, its hour spent by the new id", ask{}, "caller hour")
	forged := *two
	forged.Value = two.Value[:len(two.Value)-2] + "AA"
	if forged.Value == two.Value {
		forged.Value = two.Value[:len(two.Value)-2] + "BB"
	}
	p.limited("an id the gateway did not sign: counted by address", ask{cookie: &forged}, "caller hour")
	p.clk.Advance(caller.NewVisitor + time.Minute)
	p.pass("second visitor, a day later, by id, 1", ask{cookie: two})
	p.pass("second visitor, a day later, by id, 2", ask{cookie: two})
	p.pass("its address, a day later, apart from its ids", ask{})
}

// TestVisitorIDsDoNotMultiplyLimits: with callers: {per_hour: 3} and
// visitor ids on, one address that takes every id it is issued, uses it
// until refused and comes back without it for a new one gets 3 answers in
// the hour, not more. Before (issue 32), each request counted by address
// minted a fresh id with a full set of limits: 3 + 3×3 = 12 answers.
func TestVisitorIDsDoNotMultiplyLimits(t *testing.T) {
	checkLeaks(t)
	cfg := "visitor_ids: {secret: ${TOLLFREE_VISITOR_SECRET}}\ncallers: {per_hour: 3}\n" + fairChains
	p := newPair(t, cfg, fairEnv, nil)
	answered := 0
	for range 4 {
		r := p.send(ask{})
		if r.status != http.StatusOK {
			continue
		}
		answered++
		id := r.header.Get("X-Tollfree-Visitor")
		for range 4 {
			if p.send(ask{header: map[string]string{"X-Tollfree-Visitor": id}}).status == http.StatusOK {
				answered++
			}
		}
	}
	if answered != 3 {
		t.Errorf("one address got %d answers in the hour with per_hour: 3, want 3", answered)
	}
}
