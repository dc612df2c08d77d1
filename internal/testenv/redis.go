package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisURL is the Redis the tests share when REDIS_URL is unset.
const DefaultRedisURL = "redis://127.0.0.1:6379/0"

// RedisURL returns the URL of the shared Redis: REDIS_URL, or
// DefaultRedisURL. When it does not answer, tb is skipped (failed under CI).
func RedisURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("REDIS_URL")
	if u == "" {
		u = DefaultRedisURL
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		tb.Fatal("testenv: REDIS_URL does not parse (not shown: it may hold a password)")
	}
	if err := ping(opt, 2*time.Second); err != nil {
		unavailablef(tb, "Redis does not answer at %s (%v): start one there (redis-server --port 6379 --save '' --appendonly no) or set REDIS_URL", opt.Addr, err)
	}
	return u
}

func ping(opt *redis.Options, wait time.Duration) error {
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return c.Ping(ctx).Err()
}

// Namespace returns a Redis key namespace unique to tb, and deletes its keys
// (every key holding the hash tag {ns}) when tb ends.
func Namespace(tb testing.TB, redisURL string) string {
	tb.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	ns := "test-" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		opt, err := redis.ParseURL(redisURL)
		if err != nil {
			return
		}
		c := redis.NewClient(opt)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, "{"+ns+"}*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("testenv: deleting the keys of namespace %s: %v", ns, err)
		}
	})
	return ns
}

// RedisServer is a private redis-server on a random local port, without
// persistence: a test kills and restarts it to play an outage. Its methods
// must be called from the test's goroutine.
type RedisServer struct {
	tb   testing.TB
	bin  string
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// StartRedis starts a redis-server (from PATH, or /usr/bin) on a free port
// of 127.0.0.1 and stops it when tb ends. Without the binary tb is skipped
// (failed under CI).
func StartRedis(tb testing.TB) *RedisServer {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if _, serr := os.Stat("/usr/bin/redis-server"); serr != nil {
			unavailablef(tb, "redis-server is not installed (apt-get install redis-server): this test starts and kills its own")
		}
		bin = "/usr/bin/redis-server"
	}
	s := &RedisServer{tb: tb, bin: bin}
	tb.Cleanup(s.Kill)
	var last error
	for range 3 { // a free port may be taken between probe and start
		if s.port, last = freePort(); last != nil {
			continue
		}
		if last = s.start(); last == nil {
			return s
		}
	}
	tb.Fatalf("testenv: starting redis-server: %v", last)
	return nil
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// URL is the server's redis:// URL; it stays the same across restarts.
func (s *RedisServer) URL() string {
	return "redis://127.0.0.1:" + strconv.Itoa(s.port) + "/0"
}

// Start starts the server again on its port, empty (nothing persists), and
// waits until it answers.
func (s *RedisServer) Start() {
	s.tb.Helper()
	if s.cmd != nil {
		s.tb.Fatal("testenv: RedisServer.Start while it runs; Kill it first")
	}
	if err := s.start(); err != nil {
		s.tb.Fatalf("testenv: restarting redis-server on port %d: %v", s.port, err)
	}
}

func (s *RedisServer) start() error {
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "warning")
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	opt := &redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(s.port), MaxRetries: -1}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			s.cmd = nil
			return errors.New("redis-server exited at start (port taken?)")
		default:
		}
		err := ping(opt, 200*time.Millisecond)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return err
		}
		time.Sleep(10 * time.Millisecond) // waiting for a process, not a clock
	}
}

// Freeze stops the server (SIGSTOP): connections stay open and nothing
// answers, as with a Redis stuck on a slow command. Thaw resumes it.
func (s *RedisServer) Freeze() { s.signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (s *RedisServer) Thaw() { s.signal(syscall.SIGCONT) }

func (s *RedisServer) signal(sig syscall.Signal) {
	s.tb.Helper()
	if s.cmd == nil {
		s.tb.Fatalf("testenv: signal %v to a redis-server that is not running", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("testenv: signal %v to redis-server: %v", sig, err)
	}
}

// Kill kills the server (SIGKILL: no goodbye to its clients) and waits
// until it has exited. Killing a stopped server does nothing.
func (s *RedisServer) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Subscribers returns how many clients of the Redis at url listen on
// channel (PUBSUB NUMSUB).
func Subscribers(tb testing.TB, url, channel string) int64 {
	tb.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatal("testenv: the Redis URL does not parse")
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	m, err := c.PubSubNumSub(ctx, channel).Result()
	if err != nil {
		tb.Fatalf("testenv: PUBSUB NUMSUB %s: %v", channel, err)
	}
	return m[channel]
}

// CountKeys returns how many keys of the Redis at url match pattern.
func CountKeys(tb testing.TB, url, pattern string) int {
	tb.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatal("testenv: the Redis URL does not parse")
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n := 0
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	if err := iter.Err(); err != nil {
		tb.Fatalf("testenv: SCAN %s: %v", pattern, err)
	}
	return n
}
