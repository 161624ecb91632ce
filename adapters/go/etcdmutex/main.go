// Command etcdmutex is etcd's Go lock, go.etcd.io/etcd/client/v3/concurrency's
// Mutex on a Session, over the etcd backend's three members, behind fencecheck's
// adapter protocol (docs/adapter-protocol.md).
//
// The lock as its documentation says: clientv3.New, then
// concurrency.NewSession(cli, concurrency.WithTTL(s)) (a lease the Session keeps
// alive by itself, renew "automatic"), concurrency.NewMutex(session, prefix),
// m.Lock(ctx) or m.TryLock(ctx), m.Unlock(ctx), session.Close(). Under the hood:
// one transaction puts prefix/<lease id in hex> with the session's lease if it is
// not there yet and reads the prefix's oldest key; the key whose create revision
// is the smallest holds the lock, and a waiter watches for the deletion of the
// key created just before its own (waitDeletes), then checks that its own key is
// still there. Each acquire makes a Session of its own, so each hold has a lease
// and a key of its own; the lock's prefix is "/fencecheck/locks/<key>".
//
// Version: go.mod pins client/v3 at the newest release (v3.7.3 when this was
// written) that works against fencecheck's servers, Debian's etcd 3.4.23: the
// Mutex and Session use only the KV, Txn, Watch and Lease RPCs etcd 3.4 has, and
// the client does not check the server's version.
//
// TTL: etcd leases are whole seconds, so ttl_ms is rounded up (1000 -> 1 s,
// 1500 -> 2 s), at least 1 s; etcd may grant more than asked (its minimum
// lease, 1.5 election timeouts: 750 ms here, so 1 s stands). The ok reply says
// what was asked ("lease_requested_s").
//
// Fence: the create revision of the hold's own key. Mutex keeps it (myRev) but
// does not export it, and m.Header() is not it once the acquire waited (it is
// then the header of the Get after waitDeletes, whose revision is the store's
// current one), so after Lock the adapter Gets m.Key() (a linearizable read)
// and takes its CreateRevision, checking that the key still has the session's
// lease. Revisions only grow, the key of a grant is the oldest on the prefix,
// so each grant has a larger one. "fence_source": "create-revision".
//
// Waiting: wait_ms > 0 is Lock under a context whose deadline is wait_ms;
// wait_ms 0 is TryLock (under the command timeout). NewSession's lease Grant
// would wait for a connection without end (clientv3 calls wait for ready), so
// it runs under WithContext(a context cancelled if the Session is not made
// within the command timeout).
//
// Outcomes:
//   - acquire: nil and the key read back is "ok"; TryLock's ErrLocked is "fail
//     busy" (TryLock deleted its key before saying so); the wait's deadline is
//     "fail timeout" once the waiter's key is certainly gone: Lock deletes it
//     itself when the wait fails (m.Unlock under the client's context, which
//     has no deadline: on a cut link the acquire answers only when the link
//     heals, or fencecheck's adapter-timeout ends it), but ignores that
//     delete's error, and a deadline that came during the first
//     transaction leaves its outcome unknown, so the adapter then closes the
//     Session, whose lease revoke deletes every key of the lease (a lease
//     already gone has no key left either); only if the key is gone is it a
//     "fail". ErrSessionExpired (Lock found its own key gone: the lease ended
//     while waiting), and the lease's ErrLeaseNotFound (the first transaction,
//     which puts the key with the lease, refused whole: the lease ended before
//     it, as when the program is paused between NewSession and Lock), are
//     "fail session-expired". Anything else (a connection
//     error, a Grant that did not answer in time, a read back that failed) is
//     "error", and the Session is kept: the hold, if it was granted, stays
//     until the adapter lets go of it when the workload asks for that key again,
//     as a session's user would have it (the Curator adapter does the same).
//   - a cancel while Lock waits (the acquire's context cancelled) is "fail
//     cancelled" with the hold's owner once its key is certainly gone (Lock's
//     own delete, then the lease revoked), "error cancel-unknown" if the
//     revoke failed and the key may remain; a Lock that returned first stands.
//   - the Session's Done() closing while a hold is held (the lease expired, or
//     the keep-alive found its deadline passed, e.g. after a pause) is a "lost"
//     notice naming that hold's key and owner.
//   - release: a Session already done is released:false, lost
//     "session-expired"; otherwise m.Unlock (a delete of the key; it does not
//     say whether the key was still there) then session.Close() (revokes the
//     lease; its failure only leaves the lease to expire) is released; an
//     Unlock error is "error".
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/fencecheck/fencecheck/adapters/go/fcadapter"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// PREFIX is where the locks live: a hold's key is PREFIX<lock key>/<lease id in hex>.
const PREFIX = "/fencecheck/locks/"

// hold is one acquire's Session and Mutex, granted or left behind by an error.
type hold struct {
	key, owner string
	s          *concurrency.Session
	m          *concurrency.Mutex
	let        chan struct{} // closed when the adapter lets go of it: no lost notice after that
}

type adapter struct {
	prefix    string
	count     int
	endpoints []string
	timeout   time.Duration
	cli       *clientv3.Client
	holds     map[string]*hold   // owner -> a granted hold
	left      map[string][]*hold // key -> sessions of acquires answered "error"
}

func (a *adapter) Init(req *fcadapter.Request) error {
	a.timeout = time.Duration(req.CommandTimeoutMs) * time.Millisecond
	if a.timeout <= 0 {
		a.timeout = 3 * time.Second
	}
	a.prefix, a.holds, a.left = req.OwnerPrefix, map[string]*hold{}, map[string][]*hold{}
	for _, ep := range req.Endpoints {
		a.endpoints = append(a.endpoints, ep.Addr())
	}
	// No connecting here: the client is made at the first acquire.
	return nil
}

func (a *adapter) client() (*clientv3.Client, error) {
	if a.cli == nil {
		// clientv3.New does not wait for a connection (no grpc.WithBlock): gRPC connects in the background.
		cli, err := clientv3.New(clientv3.Config{Endpoints: a.endpoints, DialTimeout: a.timeout})
		if err != nil {
			return nil, err
		}
		a.cli = cli
	}
	return a.cli, nil
}

// session is concurrency.NewSession with a lease of ttl_ms in whole seconds, given up after the command timeout.
func (a *adapter) session(cli *clientv3.Client, leaseS int) (*concurrency.Session, error) {
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(a.timeout, cancel)
	s, err := concurrency.NewSession(cli, concurrency.WithTTL(leaseS), concurrency.WithContext(ctx))
	if !timer.Stop() {
		// The timer fired: ctx, the Session's parent context, is cancelled.
		if err == nil {
			s.Orphan()
			err = errors.New("session made after the command timeout")
		}
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return s, nil
}

// stopTelling marks a hold let go of: no lost notice for it after this.
func stopTelling(h *hold) {
	select {
	case <-h.let:
	default:
		close(h.let)
	}
}

// letGo closes a hold's Session, which revokes its lease and so deletes its key;
// a lease already gone (expired) had its keys deleted with it. The adapter no longer tells of it.
func letGo(h *hold) error {
	stopTelling(h)
	err := h.s.Close()
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		err = nil
	}
	return err
}

func logf(format string, args ...any) { log.Printf(format, args...) }

func (a *adapter) Acquire(req *fcadapter.Request) (fcadapter.Reply, error) {
	return a.AcquireCtx(context.Background(), req)
}

// AcquireCtx is Acquire under `parent`, which fencecheck's cancel cancels: Lock
// (or TryLock) returns its context's error, and the waiter's key goes as a
// timed-out wait's does (see Outcomes).
func (a *adapter) AcquireCtx(parent context.Context, req *fcadapter.Request) (fcadapter.Reply, error) {
	cli, err := a.client()
	if err != nil {
		return nil, err
	}
	// Holds of this key still here were abandoned by the workload (lost, or left by an error): let go of them first.
	for owner, h := range a.holds {
		if h.key == req.Key {
			delete(a.holds, owner)
			logf("acquire %s: letting go of %s, abandoned without a release: %v", req.Key, owner, letGo(h))
		}
	}
	for _, h := range a.left[req.Key] {
		logf("acquire %s: letting go of the session of an acquire answered error: %v", req.Key, letGo(h))
	}
	delete(a.left, req.Key)

	a.count++
	owner := fmt.Sprintf("%s-h%d", a.prefix, a.count)
	leaseS := int((req.TTLMs + 999) / 1000)
	if leaseS < 1 {
		leaseS = 1
	}
	s, err := a.session(cli, leaseS)
	if err != nil {
		// A Grant that failed or did not answer: a lease may exist, with no key of the lock.
		return fcadapter.Error("new session: " + err.Error()), nil
	}
	h := &hold{key: req.Key, owner: owner, s: s, m: concurrency.NewMutex(s, PREFIX+req.Key), let: make(chan struct{})}

	var ctx context.Context
	var cancel context.CancelFunc
	if req.WaitMs > 0 {
		ctx, cancel = context.WithTimeout(parent, time.Duration(req.WaitMs)*time.Millisecond)
		err = h.m.Lock(ctx)
	} else {
		ctx, cancel = context.WithTimeout(parent, a.timeout)
		err = h.m.TryLock(ctx)
	}
	waited := ctx.Err()
	cancel()
	if err != nil && parent.Err() != nil {
		return a.withdrawn(h, err), nil
	}

	switch {
	case err == nil:
		return a.granted(cli, h, leaseS)
	case errors.Is(err, concurrency.ErrLocked):
		// TryLock returns ErrLocked only after deleting its key.
		logf("acquire %s busy; closing its session: %v", req.Key, letGo(h))
		return fcadapter.Reply{"type": "fail", "error": "busy"}, nil
	case errors.Is(err, concurrency.ErrSessionExpired), errors.Is(err, rpctypes.ErrLeaseNotFound):
		// Lock found its own key gone (the lease ended while it waited), or the
		// transaction that puts the key was refused whole for want of its lease (it
		// ended before the first try, e.g. while this program was paused): either
		// way no key of this acquire is left.
		_ = letGo(h)
		return fcadapter.Reply{"type": "fail", "error": "session-expired", "detail": fcadapter.Short(err.Error())}, nil
	case req.WaitMs > 0 && waited != nil && errors.Is(err, context.DeadlineExceeded):
		// Lock deletes its waiter key when the wait fails (Key() is then "\x00"), but
		// ignores that delete's error; a deadline in its first transaction leaves it
		// unknown whether the key was put. Revoking the lease deletes it for certain.
		keyGone := h.m.Key() == "\x00"
		if cerr := letGo(h); cerr != nil && !keyGone {
			return fcadapter.Error(fmt.Sprintf("wait ended (%v), and its key %q may remain: revoke failed: %v", err, h.m.Key(), cerr)), nil
		}
		return fcadapter.Reply{"type": "fail", "error": "timeout"}, nil
	default:
		// Unknown: the key may have been put, even granted. Keep the Session (see left).
		a.left[req.Key] = append(a.left[req.Key], h)
		stopTelling(h)
		return fcadapter.Error(err.Error()), nil
	}
}

// withdrawn ends an acquire fencecheck cancelled while it waited: Lock deleted
// its key when its context ended (ignoring that delete's error), and revoking the
// Session's lease deletes it for certain. "cancelled" only when the key is gone.
func (a *adapter) withdrawn(h *hold, lockErr error) fcadapter.Reply {
	keyGone := h.m.Key() == "\x00" || h.m.Key() == ""
	if cerr := letGo(h); cerr != nil && !keyGone {
		return fcadapter.CancelUnknown(fmt.Sprintf("wait cancelled (%v), and its key %q may remain: revoke failed: %v", lockErr, h.m.Key(), cerr))
	}
	return fcadapter.CancelledReply(h.owner)
}

// granted reads the hold's key back for its create revision, and watches its Session.
func (a *adapter) granted(cli *clientv3.Client, h *hold, leaseS int) (fcadapter.Reply, error) {
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	resp, err := cli.Get(ctx, h.m.Key())
	cancel()
	if err == nil && (len(resp.Kvs) != 1 || clientv3.LeaseID(resp.Kvs[0].Lease) != h.s.Lease()) {
		err = fmt.Errorf("granted, but its key %q was gone when its revision was read", h.m.Key())
	}
	if err != nil {
		a.left[h.key] = append(a.left[h.key], h)
		stopTelling(h)
		return fcadapter.Error("reading the lock key back: " + err.Error()), nil
	}
	a.holds[h.owner] = h
	go func() {
		select {
		case <-h.s.Done():
			select {
			case <-h.let:
			default:
				fcadapter.Notice(map[string]any{"type": "lost", "key": h.key, "owner": h.owner})
			}
		case <-h.let:
		}
	}()
	return fcadapter.Reply{"type": "ok", "owner": h.owner, "fence": resp.Kvs[0].CreateRevision,
		"fence_source": "create-revision", "lock_key": h.m.Key(), "lease_requested_s": leaseS,
		"lease_id": fmt.Sprintf("%x", int64(h.s.Lease()))}, nil
}

func (a *adapter) Renew(req *fcadapter.Request) (fcadapter.Reply, error) {
	// renew "automatic": the Session keeps its lease alive; fencecheck sends no renew.
	return fcadapter.Reply{"type": "fail", "error": "not-owner", "detail": "renew is automatic (the session's keep-alive)"}, nil
}

func (a *adapter) Release(req *fcadapter.Request) (fcadapter.Reply, error) {
	h := a.holds[req.Owner]
	if h == nil {
		return fcadapter.Reply{"type": "fail", "error": "not-owner", "detail": "no such hold in this program"}, nil
	}
	delete(a.holds, req.Owner)
	select {
	case <-h.s.Done():
		// The lease expired, or its keep-alive gave up: the hold was lost (and told).
		logf("release %s: session already done; closing it: %v", req.Owner, letGo(h))
		return fcadapter.Reply{"type": "ok", "released": false, "lost": "session-expired"}, nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	err := h.m.Unlock(ctx)
	cancel()
	if err != nil {
		// The delete may or may not have landed: keep the Session until the key is acquired again.
		a.left[h.key] = append(a.left[h.key], h)
		stopTelling(h)
		return fcadapter.Error("unlock: " + err.Error()), nil
	}
	if cerr := letGo(h); cerr != nil {
		logf("release %s: unlocked; revoking its lease failed (it will expire): %v", req.Owner, cerr)
	}
	return fcadapter.Reply{"type": "ok", "released": true}, nil
}

func (a *adapter) Close() {
	for _, h := range a.holds {
		_ = letGo(h)
	}
	for _, hs := range a.left {
		for _, h := range hs {
			_ = letGo(h)
		}
	}
	if a.cli != nil {
		_ = a.cli.Close()
	}
}

// library names etcd's client/v3 (whose concurrency package this is) at the version this binary was built with.
func library() string {
	return "etcd client/v3 concurrency " + fcadapter.ModuleVersion("go.etcd.io/etcd/client/v3")
}

func main() {
	fcadapter.Run(&adapter{}, fcadapter.Info{Fences: true, Renew: "automatic", Library: library(), Cancel: true})
}
