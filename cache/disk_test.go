package cache

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

func newDisk(t *testing.T, dir string, clk clock.Clock) *Disk {
	t.Helper()
	d, err := NewDisk(dir, clk)
	if err != nil {
		t.Fatalf("NewDisk: %v", err)
	}
	return d
}

func TestDiskPersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(epoch)
	mustSet(t, newDisk(t, dir, clk), testKey(1), []byte("answer"), time.Hour)

	d := newDisk(t, dir, clk)
	got, ok := mustGet(t, d, testKey(1))
	if !ok || string(got) != "answer" {
		t.Errorf("after reopen: Get = %q, %v; want %q, true", got, ok, "answer")
	}
	clk.Advance(30 * time.Minute)
	_, left, ok, err := d.GetTTL(context.Background(), testKey(1))
	if err != nil || !ok || left != 30*time.Minute {
		t.Errorf("GetTTL = %v, %v, %v; want 30m0s, true, nil", left, ok, err)
	}
}

func TestDiskTTL(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(epoch)
	d := newDisk(t, dir, clk)
	mustSet(t, d, testKey(1), []byte("v"), time.Minute)
	mustSet(t, d, testKey(2), []byte("forever"), 0)
	clk.Advance(time.Minute)
	if _, ok := mustGet(t, d, testKey(1)); ok {
		t.Errorf("key 1 found after its ttl, want a miss")
	}
	if _, err := os.Stat(d.path(testKey(1))); !os.IsNotExist(err) {
		t.Errorf("expired file still there after Get (stat err %v)", err)
	}
	clk.Advance(365 * 24 * time.Hour)
	if _, ok := mustGet(t, d, testKey(2)); !ok {
		t.Errorf("key 2 (no ttl) missing, want a hit")
	}
}

func TestDiskPrune(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.Now()) // temp-file ages are read from real mtimes
	d := newDisk(t, dir, clk)
	mustSet(t, d, testKey(1), []byte("short"), time.Minute)
	mustSet(t, d, testKey(2), []byte("long"), time.Hour)
	mustSet(t, d, testKey(3), []byte("forever"), 0)

	junk := d.path(testKey(4)) // an entry's name, but cut short
	foreign := filepath.Join(dir, "ab", "notes.txt")
	for _, p := range []string{junk, foreign} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("xy"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	oldTemp := filepath.Join(dir, "ab", tempPrefix+"old")
	newTemp := filepath.Join(dir, "ab", tempPrefix+"new")
	for _, p := range []string{oldTemp, newTemp} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := clk.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(oldTemp, old, old); err != nil {
		t.Fatal(err)
	}

	clk.Advance(2 * time.Minute)
	removed, err := d.Prune(context.Background())
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if want := 3; removed != want { // key 1, junk, old temp
		t.Errorf("Prune removed %d files, want %d", removed, want)
	}
	for _, p := range []string{d.path(testKey(1)), junk, oldTemp} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there after Prune", filepath.Base(p))
		}
	}
	for _, p := range []string{d.path(testKey(2)), d.path(testKey(3)), newTemp, foreign} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed by Prune: %v", filepath.Base(p), err)
		}
	}
}

func TestDiskCorruptFileIsMiss(t *testing.T) {
	d := newDisk(t, t.TempDir(), clock.NewFake(epoch))
	p := d.path(testKey(1))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustGet(t, d, testKey(1)); ok {
		t.Errorf("a corrupt file was a hit, want a miss")
	}
}

func TestDiskCancelledContext(t *testing.T) {
	d := newDisk(t, t.TempDir(), clock.NewFake(epoch))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Set(ctx, testKey(1), []byte("v"), time.Hour); err == nil {
		t.Errorf("Set on a cancelled ctx: got nil error, want one")
	}
	if _, _, err := d.Get(ctx, testKey(1)); err == nil {
		t.Errorf("Get on a cancelled ctx: got nil error, want one")
	}
}
