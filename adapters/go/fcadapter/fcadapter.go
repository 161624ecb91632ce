// Package fcadapter is fencecheck's adapter protocol (docs/adapter-protocol.md),
// version 1, for Go: the loop that reads one request a line from standard input,
// calls the adapter, and writes exactly one reply line to standard output.
//
// It keeps, as adapters/python/fencecheck_adapter.py does, the rules an adapter
// should not have to think about:
//   - standard output carries protocol lines only: os.Stdout is pointed at
//     standard error when Run starts, so a stray fmt.Println or a library's
//     chatter cannot corrupt the stream; the protocol writes to a duplicate of
//     the original descriptor;
//   - one writer at a time: a Notice from another goroutine and a reply never
//     interleave within a line;
//   - a handler that returns a Go error, or panics, is answered "error" (an
//     unknown outcome): never guess "fail";
//   - close and end of input both end the process, after at most half a second
//     of the adapter's Close.
//
// Requests are handled one at a time on the reading goroutine, which the
// protocol allows when "cancel" is not declared (no request comes while another
// is outstanding). An adapter that can withdraw a waiting acquire implements
// Canceller and says Info.Cancel: its acquires then run on a goroutine of their
// own under a context, the reader goes on reading, and a cancel request cancels
// that context and is answered at once; any other request waits until the
// acquire is answered, so the adapter never sees two at a time.
package fcadapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Protocol is the version of docs/adapter-protocol.md this package speaks.
const Protocol = 1

// Reply is a reply's fields; "in_reply_to" is added by the loop. It must have "type".
type Reply map[string]any

// Fail is a definite failure: the lock service certainly did not do it.
func Fail(reason string) Reply { return Reply{"type": "fail", "error": reason} }

// Error is an unknown outcome: the request may or may not have been done.
func Error(reason string) Reply { return Reply{"type": "error", "error": Short(reason)} }

// Request is one request as read: the fields the protocol defines, and Raw for the rest.
type Request struct {
	ID               int64          `json:"id"`
	Type             string         `json:"type"`
	Protocol         int            `json:"protocol"`
	Backend          string         `json:"backend"`
	Endpoints        []Endpoint     `json:"endpoints"`
	OwnerPrefix      string         `json:"owner_prefix"`
	TTLMs            int64          `json:"ttl_ms"`
	CommandTimeoutMs int64          `json:"command_timeout_ms"`
	Seed             int64          `json:"seed"`
	Client           int            `json:"client"`
	Key              string         `json:"key"`
	WaitMs           int64          `json:"wait_ms"`
	Owner            string         `json:"owner"`
	Fence            *int64         `json:"fence"`
	Raw              map[string]any `json:"-"`
}

// Endpoint is one node of the lock service, as this client reaches it.
type Endpoint struct {
	Name string `json:"name"`
	Host string `json:"host"`
	Port int    `json:"port"`
}

// Addr is host:port.
func (e Endpoint) Addr() string { return fmt.Sprintf("%s:%d", e.Host, e.Port) }

// Adapter is a lock behind the protocol. Init must not connect (the set-up
// check sends endpoints where nothing listens). A returned error means "error".
type Adapter interface {
	Init(req *Request) error
	Acquire(req *Request) (Reply, error)
	Renew(req *Request) (Reply, error)
	Release(req *Request) (Reply, error)
	Close()
}

// Canceller is an adapter whose acquire can be withdrawn while it waits: ctx is
// cancelled when fencecheck sends a cancel for it. It answers "fail" "cancelled"
// (CancelledReply) only when its waiter is certainly gone from the service,
// "error" "cancel-unknown" when it cannot know, and "ok" when the lock was
// granted before the cancel took effect.
type Canceller interface {
	AcquireCtx(ctx context.Context, req *Request) (Reply, error)
}

// CancelledReply is a waiter certainly withdrawn; owner names the owner its queue entry was made for ("" if none was).
func CancelledReply(owner string) Reply {
	r := Reply{"type": "fail", "error": "cancelled"}
	if owner != "" {
		r["owner"] = owner
	}
	return r
}

// CancelUnknown is a withdrawn waiter whose entry may still be there.
func CancelUnknown(detail string) Reply {
	return Reply{"type": "error", "error": "cancel-unknown", "detail": Short(detail)}
}

// Info is what init_ok says of the adapter; it must agree with the manifest.
type Info struct {
	Fences  bool
	Renew   string // "explicit", "automatic" or "none"
	Library string
	// Cancel: the adapter implements Canceller, and init_ok says kinds {"cancel": true}.
	Cancel bool
}

var (
	outMu sync.Mutex
	out   *os.File
)

func write(msg map[string]any) error {
	line, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	outMu.Lock()
	defer outMu.Unlock()
	_, err = out.Write(append(line, '\n'))
	return err
}

// Notice sends a notice (lost, suspended, reconnected); safe from any goroutine.
func Notice(msg map[string]any) {
	if err := write(msg); err != nil {
		log.Printf("could not write notice %v: %v", msg, err)
	}
}

// Short makes an error a short phrase on one line (it becomes the info's `error`).
func Short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func closeBriefly(a Adapter) {
	done := make(chan struct{})
	go func() { defer close(done); a.Close() }()
	select {
	case <-done:
	case <-time.After(500 * time.Millisecond):
	}
}

func handle(ctx context.Context, a Adapter, info Info, req *Request) (reply Reply) {
	defer func() {
		if p := recover(); p != nil {
			log.Printf("%s request %d panicked: %v", req.Type, req.ID, p)
			reply = Error(fmt.Sprintf("panic: %v", p))
		}
	}()
	var err error
	switch req.Type {
	case "init":
		if req.Protocol != Protocol {
			log.Printf("fencecheck speaks protocol %d, this adapter %d", req.Protocol, Protocol)
		}
		if err = a.Init(req); err == nil {
			reply = Reply{"type": "init_ok", "fences": info.Fences, "renew": info.Renew}
			if info.Library != "" {
				reply["library"] = info.Library
			}
			if info.Cancel {
				reply["kinds"] = map[string]any{"cancel": true}
			}
		}
	case "acquire":
		if c, ok := a.(Canceller); ok && info.Cancel {
			reply, err = c.AcquireCtx(ctx, req)
		} else {
			reply, err = a.Acquire(req)
		}
	case "renew":
		reply, err = a.Renew(req)
	case "release":
		reply, err = a.Release(req)
	default:
		reply = Error(fmt.Sprintf("unknown request type %q", req.Type))
	}
	if err != nil {
		log.Printf("%s request %d: %v", req.Type, req.ID, err)
		return Error(err.Error())
	}
	return reply
}

// ModuleVersion is the version of a module this binary was built with (its go.sum's),
// for init_ok's library line: the one that runs, not the one a comment says.
func ModuleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "unknown"
}

// Run speaks the protocol on standard input and output until close or end of input, then exits.
func Run(a Adapter, info Info) {
	log.SetOutput(os.Stderr)
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	fd, err := syscall.Dup(int(os.Stdout.Fd()))
	if err != nil {
		log.Fatalf("dup stdout: %v", err)
	}
	out = os.NewFile(uintptr(fd), "protocol-out")
	os.Stdout = os.Stderr

	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	for {
		raw, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) == 0 {
			if err != nil { // end of input means close
				if err != io.EOF {
					log.Printf("reading requests: %v", err)
				}
				closeBriefly(a)
				os.Exit(0)
			}
			continue
		}
		var req Request
		var fields map[string]any
		if json.Unmarshal(raw, &req) != nil || json.Unmarshal(raw, &fields) != nil || fields["id"] == nil {
			// No id to answer to: a reply would itself be a bad line. Log it.
			log.Printf("ignoring a request that is not a JSON object with an id: %.200q", raw)
			continue
		}
		req.Raw = fields
		if req.Type == "cancel" {
			answer(req.ID, waiting.cancel(fields["acquire"]))
			continue
		}
		if req.Type == "close" {
			// Not behind a waiting acquire: its wait is called off, and the process ends with it.
			waiting.interrupt()
			closeBriefly(a)
			_ = write(map[string]any{"in_reply_to": req.ID, "type": "ok"})
			os.Exit(0)
		}
		// Nothing else is handled while an acquire waits: the adapter sees one request at a time.
		waiting.wait()
		if _, ok := a.(Canceller); ok && info.Cancel && req.Type == "acquire" {
			ctx := waiting.start(req.ID)
			go func(req Request) {
				reply := handle(ctx, a, info, &req)
				// Forgotten before it is answered: a cancel from now on finds no acquire waiting and is answered error; this reply stands.
				waiting.forget()
				answer(req.ID, reply)
				waiting.busy.Done()
			}(req)
			continue
		}
		answer(req.ID, handle(context.Background(), a, info, &req))
	}
}

// answer writes the reply to request id; a reply that cannot be written ends the program.
func answer(id int64, reply Reply) {
	msg := map[string]any{"in_reply_to": id}
	for k, v := range reply {
		msg[k] = v
	}
	if err := write(msg); err != nil {
		log.Printf("writing the reply to %d: %v", id, err)
		os.Exit(1)
	}
}

// pending is the acquire waiting on its goroutine, if any: its id and what cancels it.
type pending struct {
	mu   sync.Mutex
	id   int64
	stop context.CancelFunc
	busy sync.WaitGroup
}

var waiting pending

func (p *pending) start(id int64) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	p.mu.Lock()
	p.id, p.stop = id, cancel
	p.mu.Unlock()
	p.busy.Add(1)
	return ctx
}

func (p *pending) forget() {
	p.mu.Lock()
	if p.stop != nil {
		p.stop()
	}
	p.id, p.stop = 0, nil
	p.mu.Unlock()
}

func (p *pending) wait() { p.busy.Wait() }

func (p *pending) interrupt() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		p.stop()
	}
}

// cancel withdraws the acquire `which` names if it is the one waiting: ok (its
// context is cancelled, the library asked to withdraw it); error if no such
// acquire waits (it was answered already: that reply stands).
func (p *pending) cancel(which any) Reply {
	id, ok := which.(float64)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ok || p.stop == nil || int64(id) != p.id {
		return Error(fmt.Sprintf("no acquire %v is waiting", which))
	}
	p.stop()
	return Reply{"type": "ok"}
}
