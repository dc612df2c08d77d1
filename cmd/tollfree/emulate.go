package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// emulate serves the emulated free tiers (emulator.FreeTier) on their own,
// for a gateway in another process or container to use as its upstream
// with no keys and no network: the compose file's (issue 17). Any key is
// accepted.
func emulate(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("emulator", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:9000", "listen address (0.0.0.0:9000 or :9000 in a container)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q; flags only (tollfree emulator -listen :9000)", fs.Arg(0))
	}
	emu := emulator.New(emulator.Options{})
	for _, p := range emulator.FreeTier() {
		emu.AddPreset(p)
	}
	// A keyless OpenAI-compatible endpoint, as a last layer of a chain
	// (examples/portfolio's KEYLESS_BASE_URL): any model, no limits.
	emu.AddProvider(emulator.Provider{Name: "keyless"})
	emu.AddModel("keyless", emulator.Model{ID: "openai"})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (change -listen)", *listen, err)
	}
	srv := &http.Server{Handler: emu, ReadHeaderTimeout: 10 * time.Second}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "emulated free tiers on %s (any key accepted):\n", base)
	for _, p := range emulator.FreeTier() {
		fmt.Fprintf(stdout, "  %-10s base_url: %s\n", p.Provider.Name, emu.BaseURL(base, p.Provider.Name))
	}
	fmt.Fprintf(stdout, "  %-10s base_url: %s (OpenAI-compatible, no key, any model)\n", "keyless", emu.BaseURL(base, "keyless"))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
