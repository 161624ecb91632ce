// Command redislock is bsm/redislock's lock on one Redis node, behind
// fencecheck's adapter protocol (docs/adapter-protocol.md).
//
// The lock as its README says: redislock.New(goRedisClient), then
// locker.Obtain(ctx, key, ttl, &redislock.Options{RetryStrategy: ...}),
// lock.Refresh(ctx, ttl, nil) to renew, lock.Release(ctx). Under the hood: a
// Lua script SET key <random token> NX PX ttl (or SET PX again if the key
// already holds our token's prefix), retried by the retry strategy; Refresh
// and Release are owner-checked Lua scripts (PEXPIRE, DEL). bsm/redislock
// v0.9.4, the newest release, has no fencing token (no FenceKey option), so
// fences false: with --fence on, fencecheck takes fences from a Redis counter
// (--fence-source single).
//
// Waiting: wait_ms > 0 is Obtain with LinearBackoff(100 ms) (the README's)
// under a context whose deadline is wait_ms; wait_ms 0 is NoRetry (the default).
//
// Outcomes. go-redis sends each command once (MaxRetries -1). Obtain returns a
// command's error at once, ErrNotObtained when the script said no and no retry
// is left, or the context's error when the deadline came while it waited
// between tries; a hook on the client counts the commands that failed (not
// redis.Nil, not NOSCRIPT, not a refused dial), so that the deadline's error is
// "fail timeout" only when no command of this acquire failed:
//   - acquire: ok; ErrNotObtained or the deadline with every command answered
//     is "fail" (busy / timeout); anything with a failed command is "error";
//   - refresh: nil is "ok"; ErrNotObtained (the script found another token or
//     none) is "fail not-owner"; any other error is "error";
//   - release: nil is released; ErrLockNotHeld is released:false; else "error".
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/fencecheck/fencecheck/adapters/go/fcadapter"
	"github.com/redis/go-redis/v9"
)

// failures counts the commands whose outcome is unknown.
type failures struct{ n atomic.Int64 }

func (f *failures) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *failures) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		var op *net.OpError
		switch {
		case err == nil, errors.Is(err, redis.Nil), strings.HasPrefix(err.Error(), "NOSCRIPT"):
		case errors.As(err, &op) && op.Op == "dial": // nothing was sent
		default:
			f.n.Add(1)
		}
		return err
	}
}

func (f *failures) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

type adapter struct {
	prefix string
	holds  int
	client *redis.Client
	locker *redislock.Client
	failed *failures
	locks  map[string]*redislock.Lock // owner -> its Lock
}

func (a *adapter) Init(req *fcadapter.Request) error {
	timeout := time.Duration(req.CommandTimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	if len(req.Endpoints) == 0 {
		return errors.New("init names no endpoints")
	}
	a.prefix, a.locks, a.failed = req.OwnerPrefix, map[string]*redislock.Lock{}, &failures{}
	// go-redis connects at the first command: init stays offline.
	a.client = redis.NewClient(&redis.Options{
		Addr: req.Endpoints[0].Addr(), DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout,
		MaxRetries: -1, // each command sent once
	})
	a.client.AddHook(a.failed)
	a.locker = redislock.New(a.client)
	return nil
}

func (a *adapter) Acquire(req *fcadapter.Request) (fcadapter.Reply, error) {
	a.holds++
	owner := fmt.Sprintf("%s-h%d", a.prefix, a.holds)
	ttl := time.Duration(req.TTLMs) * time.Millisecond
	a.failed.n.Store(0)
	ctx, opt := context.Background(), &redislock.Options{}
	if req.WaitMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.WaitMs)*time.Millisecond)
		defer cancel()
		opt.RetryStrategy = redislock.LinearBackoff(100 * time.Millisecond)
	}
	lock, err := a.locker.Obtain(ctx, req.Key, ttl, opt)
	if err == nil {
		a.locks[owner] = lock
		return fcadapter.Reply{"type": "ok", "owner": owner, "fence": nil, "token": lock.Token()}, nil
	}
	if n := a.failed.n.Load(); n > 0 {
		return fcadapter.Error(fmt.Sprintf("not obtained, %d commands failed: %v", n, err)), nil
	}
	if errors.Is(err, redislock.ErrNotObtained) || errors.Is(err, context.DeadlineExceeded) {
		reason := "busy"
		if req.WaitMs > 0 {
			reason = "timeout"
		}
		return fcadapter.Reply{"type": "fail", "error": reason, "detail": err.Error()}, nil
	}
	return nil, err
}

func (a *adapter) Renew(req *fcadapter.Request) (fcadapter.Reply, error) {
	lock := a.locks[req.Owner]
	if lock == nil {
		return fcadapter.Reply{"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}, nil
	}
	err := lock.Refresh(context.Background(), time.Duration(req.TTLMs)*time.Millisecond, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return fcadapter.Reply{"type": "fail", "error": "not-owner"}, nil
	} else if err != nil {
		return nil, err
	}
	return fcadapter.Reply{"type": "ok", "ttl_ms": req.TTLMs}, nil
}

func (a *adapter) Release(req *fcadapter.Request) (fcadapter.Reply, error) {
	lock := a.locks[req.Owner]
	if lock == nil {
		return fcadapter.Reply{"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}, nil
	}
	delete(a.locks, req.Owner)
	err := lock.Release(context.Background())
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return fcadapter.Reply{"type": "ok", "released": false, "lost": "not-owned"}, nil
	} else if err != nil {
		return nil, err
	}
	return fcadapter.Reply{"type": "ok", "released": true}, nil
}

func (a *adapter) Close() {
	if a.client != nil {
		_ = a.client.Close()
	}
}

// library names redislock and go-redis at the versions this binary was built with.
func library() string {
	return fmt.Sprintf("bsm/redislock %s (go-redis %s)", fcadapter.ModuleVersion("github.com/bsm/redislock"), fcadapter.ModuleVersion("github.com/redis/go-redis/v9"))
}

func main() {
	fcadapter.Run(&adapter{}, fcadapter.Info{Fences: false, Renew: "explicit", Library: library()})
}
