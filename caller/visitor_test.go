package caller

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

const visitorConfig = "visitor_ids: {secret: ${VISITOR_SECRET}, ttl: 24h}\ncallers: {per_hour: 15}\n"

// TestVisitorIDs: a visitor id the gateway issued names the visitor, in
// its cookie or its header, until it expires; two visitors behind one
// address are counted apart; a tampered or expired id, or one signed with
// another secret, counts the visitor by address.
func TestVisitorIDs(t *testing.T) {
	clk := clock.NewFake(t0)
	r := New(plan(t, visitorConfig), clk)
	if !r.VisitorIDs() || r.VisitorHeader() != "X-Tollfree-Visitor" {
		t.Fatalf("visitor ids off, or header %q", r.VisitorHeader())
	}
	c1, c2 := r.IssueVisitor(true), r.IssueVisitor(false)
	if c1.Name != "tollfree_visitor" || !c1.HttpOnly || !c1.Secure || c2.Secure || c1.SameSite != http.SameSiteLaxMode ||
		c1.MaxAge != 86400 || !c1.Expires.Equal(t0.Add(24*time.Hour)) || c1.Path != "/" {
		t.Errorf("cookie = %+v", c1)
	}
	withCookie := func(c *http.Cookie) Identity {
		req := request("203.0.113.7:1", "")
		req.AddCookie(c)
		v, err := r.Identify(req)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v1, v2 := withCookie(c1), withCookie(c2)
	if v1.Source != FromVisitorID || v2.Source != FromVisitorID || v1.ID == v2.ID || !strings.HasPrefix(v1.ID, "visitor:") {
		t.Errorf("two visitors behind one address: %q (%s), %q (%s); want two visitor ids", v1.ID, v1.Source, v2.ID, v2.Source)
	}
	if v1.Limits.PerHour != 15 {
		t.Errorf("a visitor's limits = %+v", v1.Limits)
	}
	if again := withCookie(c1); again.ID != v1.ID {
		t.Errorf("the same id is not the same visitor: %q, %q", again.ID, v1.ID)
	}
	req := request("198.51.100.9:1", "")
	req.Header.Set("X-Tollfree-Visitor", c1.Value)
	if v, _ := r.Identify(req); v.ID != v1.ID {
		t.Errorf("the id in the header: %q, want %q", v.ID, v1.ID)
	}

	// Tampered: flip each character of the token in turn.
	for i := len("v1."); i < len(c1.Value); i++ {
		b := []byte(c1.Value)
		b[i] ^= 1
		if v := withCookie(&http.Cookie{Name: c1.Name, Value: string(b)}); v.Source != FromAddress || v.ID != "ip:203.0.113.7" {
			t.Fatalf("tampered at %d: %q (%s), want the address", i, v.ID, v.Source)
		}
	}
	for _, bad := range []string{"", "v1.", "v2." + c1.Value[3:], c1.Value + "A", c1.Value[:len(c1.Value)-1], strings.Repeat("x", len(c1.Value))} {
		if v := withCookie(&http.Cookie{Name: c1.Name, Value: bad}); v.Source != FromAddress {
			t.Errorf("malformed id %q accepted", bad)
		}
	}
	// Signed with another secret.
	testEnv["OTHER"] = strings.Repeat("z", 40)
	defer delete(testEnv, "OTHER")
	foreign := New(plan(t, "visitor_ids: {secret: ${OTHER}}\n"), clk).IssueVisitor(false)
	if v := withCookie(foreign); v.Source != FromAddress {
		t.Errorf("an id signed with another secret was accepted")
	}

	clk.Advance(24*time.Hour - time.Second)
	if v := withCookie(c1); v.ID != v1.ID {
		t.Errorf("a second before expiry: %q, want the id", v.ID)
	}
	clk.Advance(time.Second)
	if v := withCookie(c1); v.Source != FromAddress {
		t.Errorf("expired id accepted: %q", v.ID)
	}
}

// TestVisitorIDsOff: without visitor_ids no cookie is read or issued.
func TestVisitorIDsOff(t *testing.T) {
	on := New(plan(t, visitorConfig), clock.NewFake(t0))
	c := on.IssueVisitor(false)
	off := New(plan(t, "callers: {per_hour: 15}\n"), clock.NewFake(t0))
	req := request("203.0.113.7:1", "")
	req.AddCookie(c)
	if v, _ := off.Identify(req); v.Source != FromAddress || off.IssueVisitor(false) != nil || off.VisitorIDs() {
		t.Errorf("visitor ids off: %q (%s)", v.ID, v.Source)
	}
}

// FuzzVerify: no token but one the signer issued is accepted, and checking
// one never panics.
func FuzzVerify(f *testing.F) {
	s := newSigner(vSecret, time.Hour)
	good, _ := s.issueID(t0, [idLen]byte{1, 2, 3}) // the same in every fuzz worker
	f.Add(good)
	f.Add("v1.")
	f.Add("v1." + strings.Repeat("A", 54))
	f.Fuzz(func(t *testing.T, tok string) {
		if _, _, ok := s.verify(tok, t0); ok && tok != good {
			t.Fatalf("accepted %q", tok)
		}
	})
}
