package connect

import (
	"container/list"
	"encoding/binary"
	"sync"
	"time"

	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
)

// The per-caller sessions of an mcp connection that acts as the caller
// (auth token-exchange): at most MaxCallerSessions are kept per
// connection, and one unused for CallerSessionIdle is closed.
const (
	MaxCallerSessions = 64
	CallerSessionIdle = 5 * time.Minute
)

// callerSessions holds the sessions of an mcp connection over URL whose
// upstream token names the caller: one connection (an mcpConn with its
// own session, token and backoff) per caller, keyed by issuer, tenant and
// subject, so that two callers never share a session. The least recently
// used idle one is closed beyond MaxCallerSessions (a caller with a call
// in flight keeps its session, so the bound may be passed while more
// callers than it call at once), and a janitor closes those idle longer
// than CallerSessionIdle.
type callerSessions struct {
	parent *mcpConn
	opts   Options
	max    int
	idle   time.Duration

	mu     sync.Mutex
	byKey  map[string]*list.Element
	lru    *list.List // of *callerSession, front: most recently used
	closed bool
	stop   chan struct{}
	once   sync.Once
}

type callerSession struct {
	key      string
	conn     *mcpConn
	inflight int
	used     time.Time
}

func newCallerSessions(parent *mcpConn, o *Options) *callerSessions {
	return &callerSessions{parent: parent, opts: *o, max: MaxCallerSessions, idle: CallerSessionIdle,
		byKey: map[string]*list.Element{}, lru: list.New(), stop: make(chan struct{})}
}

// callerKey identifies a caller: a length-prefixed issuer, tenant and
// subject, so that no choice of values makes two callers collide.
func callerKey(c *auth.Credential) string {
	var b []byte
	for _, f := range []string{c.Issuer, c.Tenant, c.Subject} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return string(b)
}

// get returns the connection of the caller, made on first use, counted in
// flight until release is called.
func (p *callerSessions) get(cred *auth.Credential) (*mcpConn, func(), error) {
	key := callerKey(cred)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, nil, unavailable(config.ExecutorMCP, p.parent.name, "the gateway is shutting down")
	}
	var cs *callerSession
	if el, ok := p.byKey[key]; ok {
		cs = el.Value.(*callerSession)
		p.lru.MoveToFront(el)
	} else {
		conn := newMCPConn(p.parent.name, p.parent.cfg, &p.opts)
		conn.callers = nil
		conn.transport = p.parent.transport // one pool of HTTP connections per upstream
		cs = &callerSession{key: key, conn: conn}
		p.byKey[key] = p.lru.PushFront(cs)
		p.once.Do(func() { go p.janitor() })
	}
	cs.inflight++
	cs.used = time.Now()
	evicted := p.trimLocked()
	p.mu.Unlock()
	closeAll(evicted)
	return cs.conn, func() {
		p.mu.Lock()
		cs.inflight--
		cs.used = time.Now()
		evicted := p.trimLocked()
		p.mu.Unlock()
		closeAll(evicted)
	}, nil
}

// trimLocked removes the least recently used idle sessions beyond the
// bound and returns their connections, to be closed outside the lock.
func (p *callerSessions) trimLocked() []*mcpConn {
	var out []*mcpConn
	for el := p.lru.Back(); el != nil && p.lru.Len() > p.max; {
		prev := el.Prev()
		if cs := el.Value.(*callerSession); cs.inflight == 0 {
			out = append(out, p.removeLocked(el))
		}
		el = prev
	}
	return out
}

func (p *callerSessions) removeLocked(el *list.Element) *mcpConn {
	cs := el.Value.(*callerSession)
	delete(p.byKey, cs.key)
	p.lru.Remove(el)
	return cs.conn
}

// sweep closes the sessions idle for longer than p.idle.
func (p *callerSessions) sweep(now time.Time) int {
	p.mu.Lock()
	var out []*mcpConn
	for el := p.lru.Back(); el != nil; {
		prev := el.Prev()
		if cs := el.Value.(*callerSession); cs.inflight == 0 && now.Sub(cs.used) >= p.idle {
			out = append(out, p.removeLocked(el))
		}
		el = prev
	}
	p.mu.Unlock()
	closeAll(out)
	return len(out)
}

func (p *callerSessions) janitor() {
	t := time.NewTicker(max(p.idle/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.sweep(now)
		}
	}
}

// len returns how many caller sessions are kept.
func (p *callerSessions) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lru.Len()
}

// close closes every caller's session; later calls answer unavailable.
func (p *callerSessions) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.stop)
	var out []*mcpConn
	for p.lru.Len() > 0 {
		out = append(out, p.removeLocked(p.lru.Front()))
	}
	p.mu.Unlock()
	closeAll(out)
}

// closeAll closes the connections, concurrently.
func closeAll(conns []*mcpConn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.closeSession() }()
	}
	wg.Wait()
}

// CallerSessions returns how many per-caller sessions the mcp connection
// name keeps (0 when it does not act as the caller).
func (m *Manager) CallerSessions(name string) int {
	if c, ok := m.mcp[name]; ok && c.callers != nil {
		return c.callers.len()
	}
	return 0
}
