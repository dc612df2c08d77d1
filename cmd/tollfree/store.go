package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
	"github.com/tollfree/tollfree/state/redisstore"
)

// namespaceEnv names the variable holding the Redis key namespace, so that
// several deployments can share one Redis (issue 5). Default "tollfree".
const namespaceEnv = "TOLLFREE_NAMESPACE"

// openStore opens the shared Redis store when the plan names one, with a
// local store under it for when Redis is away; otherwise it returns nil and
// the gateway opens its own local store. The health function feeds /healthz:
// "state" is "local" without Redis, "redis" while Redis answers, and
// "local (redis unreachable...)" while each instance carries on alone.
func openStore(ctx context.Context, plan *config.Plan, log *slog.Logger) (state.Store, func(), func() map[string]string, error) {
	if plan.Redis == "" {
		return nil, func() {}, func() map[string]string { return map[string]string{"state": "local"} }, nil
	}
	local, err := memstore.Open(memstore.Options{Dir: filepath.Join(plan.DataDir, "state"), Logger: log})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening local state: %w", err)
	}
	rs, err := redisstore.Open(ctx, redisstore.Options{URL: plan.Redis, Namespace: os.Getenv(namespaceEnv), Local: local, Logger: log})
	if err != nil {
		local.Close()
		return nil, nil, nil, fmt.Errorf("opening redis state (check the redis: address and %s): %w", namespaceEnv, err)
	}
	closeFn := func() {
		rs.Close()
		local.Close()
	}
	health := func() map[string]string {
		h := rs.Health()
		// instances: how many gateways shared Redis when it was last
		// reached; while it is away, each spends that share of a budget.
		m := map[string]string{"state": "redis", "state_since": h.Since.UTC().Format(time.RFC3339), "state_files": "ok",
			"instances": strconv.Itoa(h.Instances)}
		if !h.Connected {
			m["state"] = "local (redis unreachable: carrying on with local state)"
		}
		if local.Health() != nil {
			// The local fallback's files; the log has the error.
			m["state_files"] = "failing: the local state is kept in memory and writing it is retried every second"
		}
		return m
	}
	return rs, closeFn, health, nil
}
