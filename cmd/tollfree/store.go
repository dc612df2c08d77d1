package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
	"github.com/tollfree/tollfree/state/redisstore"
)

// openStore opens the shared Redis store when the plan names one, with a
// local store under it for when Redis is away; otherwise it returns nil and
// the gateway opens its own local store.
func openStore(ctx context.Context, plan *config.Plan, log *slog.Logger) (state.Store, func(), func() map[string]string, error) {
	if plan.Redis == "" {
		return nil, func() {}, func() map[string]string { return map[string]string{"state": "local"} }, nil
	}
	local, err := memstore.Open(memstore.Options{Dir: filepath.Join(plan.DataDir, "state"), Logger: log})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening local state: %w", err)
	}
	rs, err := redisstore.Open(ctx, redisstore.Options{URL: plan.Redis, Local: local, Logger: log})
	if err != nil {
		local.Close()
		return nil, nil, nil, fmt.Errorf("opening redis state: %w", err)
	}
	closeFn := func() {
		rs.Close()
		local.Close()
	}
	health := func() map[string]string {
		h := rs.Health()
		if h.Connected {
			return map[string]string{"state": "redis"}
		}
		return map[string]string{"state": "local (redis unreachable: carrying on with local state)"}
	}
	return rs, closeFn, health, nil
}
