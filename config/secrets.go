package config

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/tollfree/tollfree/secret"
)

// credentialHeader matches the names of headers that carry a credential
// (Authorization, cf-aig-authorization, X-Api-Key, a session cookie...).
var credentialHeader = regexp.MustCompile(`(?i)auth|key|token|secret|passw|cookie|credential|session`)

// credentialParam matches the names of URL query parameters that carry a
// credential (?key=, ?api_key=, ?token=, ?password=).
var credentialParam = regexp.MustCompile(`(?i)key|token|secret|passw|auth|sig`)

// SecretValues returns every secret the plan holds, whatever its shape and
// wherever it came from (${ENV}, api_key_file, the file itself): each
// provider's key, the value of each credential header (and its last word,
// the token of "Bearer <token>"), passwords and credential query values in
// base URLs and in the Redis address, the admin token, the gateway keys and
// the visitor-id secret.
// Empty values are left out.
func (p *Plan) SecretValues() []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	for _, name := range p.ProviderOrder {
		pr := p.Providers[name]
		if pr == nil {
			continue
		}
		add(pr.APIKey)
		for k, v := range pr.Headers {
			if credentialHeader.MatchString(k) {
				add(v)
				if f := strings.Fields(v); len(f) > 1 {
					add(f[len(f)-1])
				}
			}
		}
		urlSecrets(pr.BaseURL, add)
	}
	add(p.AdminToken)
	for _, k := range p.GatewayKeys {
		add(k)
	}
	add(p.VisitorIDs.Secret)
	urlSecrets(p.Redis, add)
	return out
}

// urlSecrets adds the password and the credential query values of a URL.
func urlSecrets(raw string, add func(string)) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return
	}
	if pw, ok := u.User.Password(); ok {
		add(pw)
	}
	for k, vs := range u.Query() {
		if credentialParam.MatchString(k) {
			for _, v := range vs {
				add(v)
			}
		}
	}
}

// compileSecrets is the last step of compile: the plan's secret set.
func compileSecrets(p *Plan) { p.Secrets = secret.New(p.SecretValues()...) }
