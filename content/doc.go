// Package content keeps a folder of pages live for the gateway: the site's
// own content, which a chain's search fallback quotes and an assistant
// answers from (issue 14, item 1). It owns the one thing package search
// leaves to its caller: when to read the folder again.
//
// Open reads the folder once (search.Open) and then polls it on the
// injected clock, every Options.Poll (default 2 s), with internal/watch (the
// watcher serve's config reload uses too): it lists the files
// with their sizes and modification times, and re-indexes only when that
// list changed. The current *search.Index sits behind an atomic pointer,
// so a search never waits for a reload, and a reload that fails keeps the
// index it had. A content edit therefore changes Version within one poll,
// and a cache keyed by Version retires every answer at once (seed 000:
// "editing the content retires every cached answer at once").
//
// Nothing here is fatal. A page that cannot be indexed (not UTF-8, past a
// size cap, unreadable) is skipped and logged once, naming the file and
// the fix (search.Index.Skipped). A folder that is missing, unreadable or
// empty leaves the Library unavailable (Current is nil, Answer finds
// nothing, so the chain falls to its message or error): a warning is
// logged once with the path and the fix, Status says so for /healthz, and
// the folder is picked up when it appears.
//
// # Why polling
//
// A poll of a few hundred file sizes every two seconds costs next to
// nothing, works the same on every OS, on network and container volumes
// where inotify and FSEvents miss changes, and runs on the fake clock in
// tests. fsnotify would add a dependency, a goroutine per watched tree, and
// its own edge cases (editors that rename over a file, folders created
// later) for a latency the seed does not need: "within seconds" is enough.
// An edit that keeps a file's size within the file system's timestamp
// granularity (one second on some) may wait for the next change to show.
package content
