package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"time"
)

// watchEvery is how often serve looks at its config file for a change, as
// content/ does for the content folders.
const watchEvery = 2 * time.Second

// watchFile sends on the returned channel each time the file at path holds
// something else than when last looked at (every watchEvery, until ctx
// ends). Its contents are compared, not its time: an edit within the same
// second, or a file put back as it was, is told right. A file that cannot
// be read is no change: the next edit that can be read is one.
func watchFile(ctx context.Context, path string) <-chan struct{} {
	changed := make(chan struct{}, 1)
	last := fileSum(path)
	go func() {
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			sum := fileSum(path)
			if sum == nil || bytes.Equal(sum, last) {
				continue
			}
			last = sum
			select {
			case changed <- struct{}{}:
			default: // one reload pending reads the newest file anyway
			}
		}
	}()
	return changed
}

func fileSum(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := sha256.Sum256(b)
	return s[:]
}
