// Command redsync is go-redsync/redsync v4's Mutex over the Redlock backend's
// five Redis nodes, behind fencecheck's adapter protocol (docs/adapter-protocol.md).
//
// The lock as its README says: one goredis v9 client and pool per node,
// redsync.New(pools...), rs.NewMutex(key, redsync.WithExpiry(ttl)),
// LockContext to acquire, ExtendContext to renew, UnlockContext to release.
// Under the hood: SET key <16 random bytes, base64> NX PX ttl on every node at
// once, granted when a majority said yes and ttl - elapsed - 1% drift is still
// ahead; otherwise an owner-checked delete everywhere and another try after a
// random 50-250 ms. Extend and Unlock are owner-checked Lua scripts that need a
// majority. It issues no fencing token (fences false): with --fence on,
// fencecheck takes fences from Redis counters (--fence-source single).
//
// Waiting: the acquire's wait_ms bounds the retries, through the context given
// to LockContext (tries are otherwise unbounded here; redsync's default is 32);
// wait_ms 0 is TryLockContext, one try.
//
// Outcomes. Each go-redis client sends a command once (MaxRetries -1: a
// resent SET NX after a lost reply would read as "taken" and hide that the
// first landed). redsync folds the nodes' errors into its own and, after a
// failed try, reports only ErrFailed unless it was the last try, so the
// adapter counts the nodes' errors itself, through a pool that wraps
// redsync's goredis pool (a refused dial is not counted: nothing was sent):
//   - acquire: nil is "ok"; a failure with no node error on any try is "fail"
//     (timeout, or busy for a try-once); with node errors it is "error" (a SET
//     may have landed on a majority whose release then failed too);
//   - extend: true is "ok"; false with node errors, or a majority extended too
//     late (ErrExtendFailed), is "error"; false with every node answering is
//     "fail not-owner";
//   - unlock: true is released; false with node errors is "error"; false with
//     every node answering (expired or another's value) is released:false.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync/atomic"
	"time"

	"github.com/fencecheck/fencecheck/adapters/go/fcadapter"
	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	goredislib "github.com/redis/go-redis/v9"
)

// countingPool is redsync's goredis pool, counting the node errors of the commands it runs.
type countingPool struct {
	rsredis.Pool
	errs *atomic.Int64
}

func (p countingPool) Get(ctx context.Context) (rsredis.Conn, error) {
	c, err := p.Pool.Get(ctx)
	if err != nil {
		p.count(err)
		return nil, err
	}
	return countingConn{c, p}, nil
}

// count counts an error that may have followed a command's sending: not redis.Nil, not a refused dial.
func (p countingPool) count(err error) {
	var op *net.OpError
	if err == nil || errors.Is(err, goredislib.Nil) || (errors.As(err, &op) && op.Op == "dial") {
		return
	}
	p.errs.Add(1)
}

type countingConn struct {
	rsredis.Conn
	p countingPool
}

func (c countingConn) Get(name string) (string, error) {
	v, err := c.Conn.Get(name)
	c.p.count(err)
	return v, err
}

func (c countingConn) SetNX(name, value string, expiry time.Duration) (bool, error) {
	v, err := c.Conn.SetNX(name, value, expiry)
	c.p.count(err)
	return v, err
}

func (c countingConn) Eval(script *rsredis.Script, keysAndArgs ...any) (any, error) {
	v, err := c.Conn.Eval(script, keysAndArgs...)
	c.p.count(err)
	return v, err
}

type adapter struct {
	prefix  string
	holds   int
	clients []*goredislib.Client
	rs      *redsync.Redsync
	errs    atomic.Int64
	mutexes map[string]*redsync.Mutex // owner -> its Mutex
}

func (a *adapter) Init(req *fcadapter.Request) error {
	timeout := time.Duration(req.CommandTimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	a.prefix, a.mutexes = req.OwnerPrefix, map[string]*redsync.Mutex{}
	var pools []rsredis.Pool
	for _, ep := range req.Endpoints {
		// go-redis connects at the first command: init stays offline.
		c := goredislib.NewClient(&goredislib.Options{
			Addr: ep.Addr(), DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout,
			MaxRetries: -1, // each command sent once
		})
		a.clients = append(a.clients, c)
		pools = append(pools, countingPool{goredis.NewPool(c), &a.errs})
	}
	a.rs = redsync.New(pools...)
	return nil
}

func (a *adapter) Acquire(req *fcadapter.Request) (fcadapter.Reply, error) {
	a.holds++
	owner := fmt.Sprintf("%s-h%d", a.prefix, a.holds)
	ttl := time.Duration(req.TTLMs) * time.Millisecond
	m := a.rs.NewMutex(req.Key, redsync.WithExpiry(ttl), redsync.WithTries(math.MaxInt32))
	a.errs.Store(0)
	var err error
	if req.WaitMs > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(req.WaitMs)*time.Millisecond)
		err = m.LockContext(ctx)
		cancel()
	} else {
		err = m.TryLockContext(context.Background())
	}
	if err == nil {
		a.mutexes[owner] = m
		return fcadapter.Reply{"type": "ok", "owner": owner, "fence": nil, "value": m.Value(),
			"validity_ms": time.Until(m.Until()).Milliseconds()}, nil
	}
	if n := a.errs.Load(); n > 0 {
		return fcadapter.Error(fmt.Sprintf("not acquired, %d node errors: %v", n, err)), nil
	}
	if req.WaitMs > 0 {
		return fcadapter.Reply{"type": "fail", "error": "timeout", "detail": fcadapter.Short(err.Error())}, nil
	}
	return fcadapter.Reply{"type": "fail", "error": "busy", "detail": fcadapter.Short(err.Error())}, nil
}

func (a *adapter) Renew(req *fcadapter.Request) (fcadapter.Reply, error) {
	m := a.mutexes[req.Owner]
	if m == nil {
		return fcadapter.Reply{"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}, nil
	}
	a.errs.Store(0)
	ok, err := m.ExtendContext(context.Background())
	if ok {
		// Extend resets the lease to the Mutex's expiry, the acquire's ttl.
		return fcadapter.Reply{"type": "ok", "ttl_ms": req.TTLMs, "validity_ms": time.Until(m.Until()).Milliseconds()}, nil
	}
	if errors.Is(err, redsync.ErrExtendFailed) {
		return fcadapter.Error("extended on a majority past its validity: " + err.Error()), nil
	}
	if n := a.errs.Load(); n > 0 {
		return fcadapter.Error(fmt.Sprintf("no majority extended, %d node errors: %v", n, err)), nil
	}
	return fcadapter.Reply{"type": "fail", "error": "not-owner", "detail": fcadapter.Short(fmt.Sprint(err))}, nil
}

func (a *adapter) Release(req *fcadapter.Request) (fcadapter.Reply, error) {
	m := a.mutexes[req.Owner]
	if m == nil {
		return fcadapter.Reply{"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}, nil
	}
	delete(a.mutexes, req.Owner)
	a.errs.Store(0)
	ok, err := m.UnlockContext(context.Background())
	if ok {
		return fcadapter.Reply{"type": "ok", "released": true}, nil
	}
	if n := a.errs.Load(); n > 0 {
		return fcadapter.Error(fmt.Sprintf("no majority released, %d node errors: %v", n, err)), nil
	}
	// Every node answered and no majority held our value: the lease had ended.
	return fcadapter.Reply{"type": "ok", "released": false, "lost": "not-owned"}, nil
}

func (a *adapter) Close() {
	for _, c := range a.clients {
		_ = c.Close()
	}
}

// library names redsync and go-redis at the versions this binary was built with.
func library() string {
	return fmt.Sprintf("redsync %s (go-redis %s)", fcadapter.ModuleVersion("github.com/go-redsync/redsync/v4"), fcadapter.ModuleVersion("github.com/redis/go-redis/v9"))
}

func main() {
	fcadapter.Run(&adapter{}, fcadapter.Info{Fences: false, Renew: "explicit", Library: library()})
}
