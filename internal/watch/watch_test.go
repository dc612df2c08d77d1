package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tollfree/tollfree/internal/clock"
)

// look moves the fake clock past the watcher's next look, once it waits
// for it, and reports whether that look called changed.
func look(t *testing.T, clk *clock.Fake, changed <-chan struct{}) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatalf("the watcher never waited for its next look: %v", err)
	}
	clk.Advance(DefaultEvery)
	// The next wait begins only after the look and its change function.
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatalf("the watcher did not come back after a look: %v", err)
	}
	select {
	case <-changed:
		return true
	default:
		return false
	}
}

func TestFile(t *testing.T) {
	defer goleak.VerifyNone(t)
	path := filepath.Join(t.TempDir(), "tollfree.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a")
	clk := clock.NewFake(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC))
	changed := make(chan struct{}, 10)
	w := New(File(path), Options{Clock: clk})
	w.Start(func() { changed <- struct{}{} })
	defer w.Close()

	if look(t, clk, changed) {
		t.Error("a look at an unchanged file called changed")
	}
	write("b")
	if !look(t, clk, changed) {
		t.Error("an edit was not seen")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if look(t, clk, changed) {
		t.Error("a file that cannot be read was taken for a change")
	}
	write("b") // put back as it was last read: no change
	if look(t, clk, changed) {
		t.Error("a file put back as it was was taken for a change")
	}
	write("c")
	if !look(t, clk, changed) {
		t.Error("an edit after the file came back was not seen")
	}
}

func TestFolder(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	sum := Folder(dir)
	empty := sum()
	if err := os.WriteFile(filepath.Join(dir, "page.md"), []byte("# Page"), 0o644); err != nil {
		t.Fatal(err)
	}
	page := sum()
	if page == empty {
		t.Error("a new page did not change the folder's sum")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if gone := sum(); gone == "" || gone == page {
		t.Errorf("a folder gone sums to %q: want a sum of its own, so that its coming back is a change", gone)
	}
}

func TestCloseUnstarted(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := New(File(filepath.Join(t.TempDir(), "none")), Options{})
	w.Close()
	w.Close()
}
