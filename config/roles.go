package config

import (
	"fmt"
	"strings"
)

// A role variable (seed 002) defines a same-model chain from the
// environment:
//
//	PLANNER_MODEL="openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:gpt-oss-120b"
//
// Each route is kind:provider:model, kind being openai-compatible or gemini;
// the model may itself hold colons (qwen3:8b). The chain is named after the
// variable without its _MODEL suffix, in lower case (planner); it is
// same_model, not interactive, and waits up to wait_cap (default 2m) for a
// limited route.

const roleForm = `want kind:provider:model, several joined with " | ", such as ` +
	`"openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:gpt-oss-120b" ` +
	`(kind is openai-compatible or gemini)`

// roleDialect returns the dialect a role route's kind requires.
func roleDialect(kind string) (Dialect, bool) {
	switch kind {
	case "openai-compatible":
		return DialectOpenAI, true
	case "gemini":
		return DialectGemini, true
	}
	return "", false
}

type roleRoute struct {
	kind, provider, model string
}

// parseRole parses a role variable's value.
func parseRole(spec string) ([]roleRoute, error) {
	var out []roleRoute
	for i, part := range strings.Split(spec, "|") {
		part = strings.TrimSpace(part)
		kind, rest, ok1 := strings.Cut(part, ":")
		prov, model, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || prov == "" || model == "" || strings.ContainsAny(prov, "/ ") {
			return nil, fmt.Errorf("route %d is not kind:provider:model; %s", i+1, roleForm)
		}
		if _, ok := roleDialect(kind); !ok {
			return nil, fmt.Errorf("route %d: unknown kind %q%s; %s", i+1, kind, didYouMean(kind, []string{"openai-compatible", "gemini"}), roleForm)
		}
		out = append(out, roleRoute{kind: kind, provider: prov, model: strings.TrimSpace(model)})
	}
	return out, nil
}

// roleChainName names the chain a role variable defines.
func roleChainName(v string) string {
	return strings.ToLower(strings.TrimSuffix(v, "_MODEL"))
}

// addRoles turns the role variables that are set into chains.
func (l *loader) addRoles() {
	for i, v := range l.f.Roles {
		path := fmt.Sprintf("roles[%d]", i)
		if !validVarName(v) {
			l.probs.addf(path, "%q is not an environment variable's name (write, say, PLANNER_MODEL)", v)
			continue
		}
		spec := strings.TrimSpace(l.env(v))
		if spec == "" {
			continue
		}
		routes, err := parseRole(spec)
		if err != nil {
			l.probs.addEnv(v, err.Error())
			continue
		}
		name := roleChainName(v)
		if _, ok := l.f.Chains[name]; ok {
			l.probs.addEnv(v, fmt.Sprintf("defines chain %q, which chains: already defines; rename one or drop %s from roles:", name, v))
			continue
		}
		c := &ChainConfig{SameModel: true, Interactive: ptr(false)}
		var kinds []string
		for _, r := range routes {
			if _, ok := l.f.Providers[r.provider]; !ok {
				if _, preset := l.cat[r.provider]; preset {
					// A preset named only by a role joins the providers.
					l.f.Providers[r.provider] = &ProviderConfig{}
					l.provOrder = append(l.provOrder, r.provider)
				}
			}
			c.Routes = append(c.Routes, RouteRef{Route: r.provider + "/" + r.model})
			kinds = append(kinds, r.kind)
		}
		l.f.Chains[name] = c
		l.chainOrder = append(l.chainOrder, name)
		l.roleVar[name] = v
		l.roleKinds[name] = kinds
	}
}
