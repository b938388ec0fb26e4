// Package pins pins the capabilities proxy.import takes from upstream MCP
// servers (the "rug pull" defence). Every imported tool's definition (the
// members connect's import keeps: name, title, description, input and
// output schema, annotations) is hashed, SHA-256 over its canonical JSON
// (the canonical form of package canonjson, the one the idempotency
// fingerprints hash: object members sorted by key,
// strings as encoding/json writes them, numbers as exact decimals), and
// the hash is stored (store.CapabilityPin) the first time the gateway
// imports it: first-import trust. Each later import (at start, on a
// reload, on the import retry, and when the upstream sends
// notifications/tools/list_changed) compares the definition offered with
// the pin. Under the connection's pin mode:
//
//   - enforce (the default): a different definition quarantines the
//     capability: calls are refused with capability-quarantined (nothing
//     is called), search and describe show it with the reason and both
//     hashes, MCP's tools/list leaves it out, /readyz and /metrics count
//     it, until an operator accepts the new definition (Pins.Accept:
//     praxa capabilities accept, POST /v8/capabilities/{name}/accept);
//   - warn: the change is audited and logged, and the new definition is
//     served;
//   - off: nothing is checked or stored.
//
// The offered definition is stored beside the pin, so that an operator
// (or the console) reviews it and the command line accepts it from the
// store alone, without the running gateway; a gateway that holds the
// capability in quarantine reads the pin again before refusing a call,
// so an acceptance made elsewhere (the command line, another replica)
// takes effect at the next call.
//
// The quarantine is a step of the service's admission chain (package
// gateway asks Pins.Refusal before a move that fires a capability); the
// state in force is a Pins, which a reload replaces (Install) after
// checking the new configuration's definitions (Check).
package pins

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/canonjson"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// Audit event types of the pins.
const (
	// EventPinCreated: an imported capability was pinned at first import.
	EventPinCreated = "capability.pin_created"
	// EventPinMismatch: the upstream offers a definition other than the
	// pinned one (outcome refused under enforce: quarantined; allowed
	// under warn: served).
	EventPinMismatch = "capability.pin_mismatch"
	// EventPinAccepted: an operator accepted the offered definition.
	EventPinAccepted = "capability.pin_accepted"
)

// PinFirstImport is the AcceptedBy of a pin the gateway trusted at first
// import.
const PinFirstImport = "first-import"

// Quarantine says why an imported capability is not callable, as search,
// describe and the refusal of a call show it.
type Quarantine struct {
	// Reason says what changed, in a sentence.
	Reason string `json:"reason"`
	// PinnedSHA256 is the hash of the definition accepted,
	// OfferedSHA256 that of the one the upstream offers now.
	PinnedSHA256  string `json:"pinnedSha256"`
	OfferedSHA256 string `json:"offeredSha256"`
	// Since is when the upstream was first seen offering it.
	Since time.Time `json:"since"`
}

// QuarantinedCapability is one quarantined capability, as an operator
// reviews it (Pins.Review): the quarantine, the
// upstream tool, and both definitions (canonical JSON) to compare.
type QuarantinedCapability struct {
	Capability string `json:"capability"`
	Connection string `json:"connection"`
	Tool       string `json:"tool"`
	Quarantine
	// PinnedDefinition and OfferedDefinition are left out of /readyz
	// (Quarantined).
	PinnedDefinition  json.RawMessage `json:"pinnedDefinition,omitempty"`
	OfferedDefinition json.RawMessage `json:"offeredDefinition,omitempty"`
}

// CapabilityAccepted is the answer of Pins.Accept.
type CapabilityAccepted struct {
	Capability     string    `json:"capability"`
	SHA256         string    `json:"sha256"`
	PreviousSHA256 string    `json:"previousSha256"`
	AcceptedBy     string    `json:"acceptedBy"`
	At             time.Time `json:"at"`
}

// Quarantines are the quarantined capabilities of one configuration, by
// capability id (Check).
type Quarantines map[string]QuarantinedCapability

// IDs lists the quarantined capability ids, sorted.
func (q Quarantines) IDs() []string { return slices.Sorted(maps.Keys(q)) }

// Pins holds the quarantined capabilities in force and serves the
// operator's review and acceptance of their new definitions. Its methods
// are safe for use by multiple goroutines.
type Pins struct {
	store   store.Store
	now     func() time.Time
	changes *ToolListChanges
	mu      sync.RWMutex
	q       Quarantines
}

// Options configure a Pins. The zero value is usable.
type Options struct {
	// Now is the clock acceptances are dated by (default time.Now).
	Now func() time.Time
	// Quarantines are the capabilities quarantined at start (Check).
	Quarantines Quarantines
	// Changes receives the requests to list the imported tools again that
	// an acceptance makes (nil: a fresh ToolListChanges, see Changes).
	Changes *ToolListChanges
}

// New returns the Pins of st.
func New(st store.Store, opts *Options) *Pins {
	o := *cmp.Or(opts, &Options{})
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Changes == nil {
		o.Changes = NewToolListChanges()
	}
	p := &Pins{store: st, now: o.Now, changes: o.Changes}
	p.Install(o.Quarantines)
	return p
}

// Changes returns the requests to list the imported tools again (an
// upstream's notifications/tools/list_changed, an acceptance).
func (s *Pins) Changes() *ToolListChanges { return s.changes }

// DefinitionHash returns the canonical JSON of a pinned definition
// (config.UpstreamTool.Definition) and its hex SHA-256.
func DefinitionHash(def map[string]any) ([]byte, string, error) {
	var b strings.Builder
	if err := canonjson.Write(&b, def); err != nil {
		return nil, "", fmt.Errorf("pin: the definition has no canonical JSON: %w", err)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return []byte(b.String()), hex.EncodeToString(sum[:]), nil
}

// Check compares the definitions of the imported capabilities among
// caps (those with Upstream set, pin not off) with their pins in st, in
// one transaction: it pins a capability seen for the first time, records
// a different definition offered (audited once per new hash), clears one
// the upstream no longer offers, and returns the capabilities that pin
// enforce quarantines. Concurrent checks of several replicas are retried
// on the store's conflicts. log receives the warn mode's lines.
func Check(ctx context.Context, st store.Store, caps []config.ExposedCapability, now time.Time, log *slog.Logger) (Quarantines, error) {
	if log == nil {
		log = slog.Default()
	}
	type checked struct {
		cap      config.ExposedCapability
		def, sum string
	}
	var todo []checked
	for _, c := range caps {
		u := c.Upstream
		if u == nil || u.Pin == config.PinOff {
			continue
		}
		def, sum, err := DefinitionHash(u.Definition)
		if err != nil {
			return nil, fmt.Errorf("capability %s: %w", c.ID, err)
		}
		todo = append(todo, checked{cap: c, def: string(def), sum: sum})
	}
	if len(todo) == 0 {
		return Quarantines{}, nil
	}
	now = now.UTC()
	// One trace holds the events of one check.
	trace := ids.Trace()
	var out Quarantines
	var warned []string
	var err error
	for range 5 {
		out, warned = Quarantines{}, nil
		err = st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
			var events []store.Event
			for _, c := range todo {
				u := c.cap.Upstream
				attrs := map[string]any{"capability": c.cap.ID, "connection": u.Connection, "tool": u.Tool, "pin": u.Pin}
				ev := op.EventSpec{Actor: op.Gateway(c.cap.ID, ""), TraceID: trace, At: now, Attributes: attrs}
				p, err := tx.GetCapabilityPin(ctx, c.cap.ID)
				switch {
				case errors.Is(err, store.ErrNotFound):
					p = store.CapabilityPin{Capability: c.cap.ID, Connection: u.Connection, Tool: u.Tool, SHA256: c.sum,
						Definition: []byte(c.def), Version: 1, AcceptedBy: PinFirstImport, CreatedAt: now, UpdatedAt: now}
					if err := tx.PutCapabilityPin(ctx, p, 0); err != nil {
						return err
					}
					attrs["sha256"] = c.sum
					ev.Type, ev.Outcome = EventPinCreated, "allowed"
					events = append(events, ev.Build())
					continue
				case err != nil:
					return err
				}
				if p.SHA256 == c.sum {
					if p.OfferedSHA256 != "" || p.Connection != u.Connection || p.Tool != u.Tool {
						// The upstream offers the pinned definition again.
						prev := p.Version
						p.OfferedSHA256, p.OfferedDefinition, p.OfferedAt = "", nil, time.Time{}
						p.Connection, p.Tool, p.Version, p.UpdatedAt = u.Connection, u.Tool, p.Version+1, now
						if err := tx.PutCapabilityPin(ctx, p, prev); err != nil {
							return err
						}
					}
					continue
				}
				if p.OfferedSHA256 != c.sum {
					prev := p.Version
					p.OfferedSHA256, p.OfferedDefinition, p.OfferedAt = c.sum, []byte(c.def), now
					p.Connection, p.Tool, p.Version, p.UpdatedAt = u.Connection, u.Tool, p.Version+1, now
					if err := tx.PutCapabilityPin(ctx, p, prev); err != nil {
						return err
					}
					attrs["pinnedSha256"], attrs["offeredSha256"] = p.SHA256, c.sum
					ev.Type, ev.Outcome = EventPinMismatch, "allowed"
					if u.Pin == config.PinEnforce {
						ev.Outcome, ev.Code = "refused", string(contracts.CodeCapabilityQuarantined)
					}
					events = append(events, ev.Build())
				}
				if u.Pin == config.PinEnforce {
					out[c.cap.ID] = quarantined(p)
				} else {
					warned = append(warned, c.cap.ID)
				}
			}
			if len(events) == 0 {
				return nil
			}
			return tx.AppendEvents(ctx, events)
		})
		if !errors.Is(err, store.ErrExists) && !errors.Is(err, store.ErrConflict) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("pin the imported capabilities: %w", err)
	}
	for _, id := range out.IDs() {
		q := out[id]
		log.WarnContext(ctx, "proxy.import: capability quarantined: its upstream definition changed; an operator accepts it with praxa capabilities accept",
			"capability", id, "connection", q.Connection, "tool", q.Tool, "pinned_sha256", q.PinnedSHA256, "offered_sha256", q.OfferedSHA256)
	}
	for _, id := range warned {
		log.WarnContext(ctx, "proxy.import: the upstream definition of a capability changed (pin warn: served)", "capability", id)
	}
	return out, nil
}

// quarantined is the quarantine of a pin whose upstream offers another
// definition.
func quarantined(p store.CapabilityPin) QuarantinedCapability {
	return QuarantinedCapability{Capability: p.Capability, Connection: p.Connection, Tool: p.Tool,
		Quarantine: Quarantine{
			Reason: fmt.Sprintf("the upstream tool %s of connection %s now offers a definition other than the one pinned; an operator reviews and accepts it",
				p.Tool, p.Connection),
			PinnedSHA256: p.SHA256, OfferedSHA256: p.OfferedSHA256, Since: p.OfferedAt},
		PinnedDefinition: json.RawMessage(p.Definition), OfferedDefinition: json.RawMessage(p.OfferedDefinition)}
}

// Install makes q the quarantined capabilities in force (a reload's,
// after Check).
func (s *Pins) Install(q Quarantines) {
	if q == nil {
		q = Quarantines{}
	}
	s.mu.Lock()
	s.q = q
	s.mu.Unlock()
}

// quarantine returns the quarantine of the capability id, if any.
func (s *Pins) quarantine(id string) (QuarantinedCapability, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q, ok := s.q[id]
	return q, ok
}

// Any reports whether some capability is quarantined.
func (s *Pins) Any() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.q) > 0
}

// release lifts the quarantine of id in this process (its pin was
// accepted) and asks for the imported tools to be listed again, so that
// the MCP surfaces list the capability again (tools/list_changed).
func (s *Pins) release(id string) {
	s.mu.Lock()
	_, had := s.q[id]
	if had {
		q := maps.Clone(s.q)
		delete(q, id)
		s.q = q
	}
	s.mu.Unlock()
	if had {
		s.changes.accepted.Store(true)
		s.changes.Notify("")
	}
}

// Quarantined lists the capabilities quarantined in this process, by id,
// without their definitions and without reading the store: what /readyz
// reports.
func (s *Pins) Quarantined() []QuarantinedCapability {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]QuarantinedCapability, 0, len(s.q))
	for _, id := range s.q.IDs() {
		q := s.q[id]
		q.PinnedDefinition, q.OfferedDefinition = nil, nil
		out = append(out, q)
	}
	return out
}

// Counts counts the quarantined capabilities by connection, for
// /metrics.
func (s *Pins) Counts() map[string]int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]int{}
	for _, q := range s.q {
		out[q.Connection]++
	}
	return out
}

// Current reads again the pin of the quarantined capability
// id: when it was accepted meanwhile (by the command line, another
// replica) the quarantine is lifted here too. It returns the quarantine
// still in force, if any. A failed read keeps the quarantine (fail
// closed).
func (s *Pins) Current(ctx context.Context, id string) (QuarantinedCapability, bool) {
	q, ok := s.quarantine(id)
	if !ok {
		return q, false
	}
	var p store.CapabilityPin
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		p, err = tx.GetCapabilityPin(ctx, id)
		return err
	})
	if err != nil || p.SHA256 != q.OfferedSHA256 {
		return q, true
	}
	s.release(id)
	return q, false
}

// Refusal is the refusal of a call of a quarantined capability (the
// admission chain's quarantine step), nil when id is not quarantined.
func (s *Pins) Refusal(ctx context.Context, id string) *contracts.Error {
	if id == "" || !s.Any() {
		return nil
	}
	q, ok := s.Current(ctx, id)
	if !ok {
		return nil
	}
	return &contracts.Error{Code: contracts.CodeCapabilityQuarantined,
		Message: fmt.Sprintf("the capability %s is quarantined: %s (pinned sha256 %s, offered sha256 %s)", id, q.Reason, q.PinnedSHA256, q.OfferedSHA256),
		Hint: "Nothing was called. An operator reviews the new definition and accepts it (praxa capabilities accept " + id +
			", or POST /v8/capabilities/" + id + "/accept with scope capabilities:admin); until then, use another capability.",
		OperatorCommand: "praxa capabilities accept " + id,
		Links: []contracts.Link{
			{Rel: "operator_path", Method: "cli", Args: map[string]any{"command": "praxa capabilities accept " + id}},
			{Rel: "operator_path", Title: "Accept over REST (scope capabilities:admin)", Method: "POST /v8/capabilities/{name}/accept",
				Args: map[string]any{"name": id, "sha256": q.OfferedSHA256}},
			{Rel: "describe", Method: contracts.ToolPraxecQuery, Args: map[string]any{"subject": id}},
		}}
}

// Review lists the capabilities quarantined in this
// gateway, by id, with both definitions for review (scope
// capabilities:admin; p nil for the operator's own command line). An
// acceptance made elsewhere is seen: each is read again from the store.
func (s *Pins) Review(ctx context.Context, p *auth.Principal) ([]QuarantinedCapability, error) {
	if p != nil {
		if err := op.RequireScope(p, contracts.ScopeCapabilitiesAdmin); err != nil {
			return nil, err
		}
	}
	s.mu.RLock()
	ids := s.q.IDs()
	s.mu.RUnlock()
	out := []QuarantinedCapability{}
	for _, id := range ids {
		if q, ok := s.Current(ctx, id); ok {
			out = append(out, q)
		}
	}
	return out, nil
}

// Pending lists, from the store alone, the capabilities whose upstream
// offers a definition other than the one pinned (quarantined under
// enforce, served under warn), by id: what the command line shows without
// the running gateway.
func (s *Pins) Pending(ctx context.Context) ([]QuarantinedCapability, error) {
	var out []QuarantinedCapability
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		pins, err := tx.ListCapabilityPins(ctx)
		for _, p := range pins {
			if p.OfferedSHA256 != "" {
				out = append(out, quarantined(p))
			}
		}
		return err
	})
	if err != nil {
		return nil, op.AsError(err)
	}
	return out, nil
}

// AcceptRequest asks to accept the offered definition of a capability.
type AcceptRequest struct {
	// Name is the capability's id.
	Name string
	// SHA256, when set, is the hash of the offered definition reviewed:
	// another one offered meanwhile refuses the request.
	SHA256 string
	// RequestID and TraceID place the audit event in the caller's trace.
	RequestID, TraceID string
}

// Accept pins the definition the upstream offers for the
// imported capability req.Name in place of the pinned one (scope
// capabilities:admin; p nil for the operator's own command line, which
// acts with the store's authority), audited as capability.pin_accepted
// with the operator and both hashes. The quarantine is lifted in this
// process at once, and the imported tools are listed again so that MCP
// clients are told (tools/list_changed); other processes lift it at
// their next call of the capability. A capability with no different
// definition offered is not-found.
func (s *Pins) Accept(ctx context.Context, p *auth.Principal, req AcceptRequest) (CapabilityAccepted, error) {
	if p != nil {
		if err := op.RequireScope(p, contracts.ScopeCapabilitiesAdmin); err != nil {
			return CapabilityAccepted{}, err
		}
	}
	by := op.SubjectOperator
	if p != nil {
		by = p.Subject
	}
	now := s.now().UTC()
	var res CapabilityAccepted
	err := s.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		pin, err := tx.GetCapabilityPin(ctx, req.Name)
		if errors.Is(err, store.ErrNotFound) || (err == nil && pin.OfferedSHA256 == "") {
			return &contracts.Error{Code: contracts.CodeNotFound,
				Message: fmt.Sprintf("the capability %s has no changed upstream definition waiting to be accepted", req.Name),
				Hint:    "List what waits with praxa capabilities list; a capability is pinned when it is first imported, and waits for acceptance only once its upstream offers another definition.",
				Links:   []contracts.Link{{Rel: "operator_path", Method: "cli", Args: map[string]any{"command": "praxa capabilities list"}}}}
		}
		if err != nil {
			return err
		}
		if req.SHA256 != "" && req.SHA256 != pin.OfferedSHA256 {
			return &contracts.Error{Code: contracts.CodeInvalidParams,
				Message: fmt.Sprintf("the upstream of %s now offers the definition %s, not the one reviewed (%s); nothing was accepted", req.Name, pin.OfferedSHA256, req.SHA256),
				Hint:    "Review the definition offered now, then accept it with its sha256.",
				Fields:  []contracts.FieldError{{Pointer: "/sha256", Detail: "must be the offered definition's SHA-256, " + pin.OfferedSHA256}}}
		}
		res = CapabilityAccepted{Capability: req.Name, SHA256: pin.OfferedSHA256, PreviousSHA256: pin.SHA256, AcceptedBy: by, At: now}
		prev := pin.Version
		pin.SHA256, pin.Definition = pin.OfferedSHA256, pin.OfferedDefinition
		pin.OfferedSHA256, pin.OfferedDefinition, pin.OfferedAt = "", nil, time.Time{}
		pin.Version, pin.AcceptedBy, pin.UpdatedAt = prev+1, by, now
		if err := tx.PutCapabilityPin(ctx, pin, prev); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, []store.Event{op.EventSpec{Actor: op.Operator(p, req.Name, contracts.EndpointAcceptCapability),
			Type: EventPinAccepted, Outcome: "allowed", RequestID: req.RequestID, TraceID: req.TraceID, At: now,
			Attributes: map[string]any{"capability": req.Name, "connection": pin.Connection, "tool": pin.Tool,
				"sha256": res.SHA256, "previousSha256": res.PreviousSHA256}}.Build()})
	})
	if err != nil {
		return CapabilityAccepted{}, op.AsError(err)
	}
	s.release(req.Name)
	return res, nil
}

// ToolListChanges coalesces the requests to list the imported tools again:
// an upstream's notifications/tools/list_changed (connect.Options'
// ToolsChanged is its Notify), an accepted capability. A Reloader's
// RetryImports serves them through the reload path, which checks the pins
// again and tells MCP clients (tools/list_changed). The zero value is not
// usable: use NewToolListChanges.
type ToolListChanges struct {
	ch chan struct{}
	// accepted says that a capability was accepted since the last
	// listing: the tools are imported again even if the upstreams list
	// what runs, for the quarantine changed.
	accepted atomic.Bool
}

// NewToolListChanges returns an empty ToolListChanges.
func NewToolListChanges() *ToolListChanges {
	return &ToolListChanges{ch: make(chan struct{}, 1)}
}

// Notify asks for the imported tools to be listed again (connection names
// the upstream that changed, "" for none in particular); it never blocks,
// and requests made before the listing starts are served by one listing.
func (c *ToolListChanges) Notify(connection string) {
	if c == nil {
		return
	}
	select {
	case c.ch <- struct{}{}:
	default:
	}
}

// C receives a value when the imported tools are to be listed again.
func (c *ToolListChanges) C() <-chan struct{} { return c.ch }

// TakeAccepted reports whether a capability was accepted since it was last
// asked, and clears that: the tools are then imported again even if the
// upstreams list what runs, for the quarantine changed.
func (c *ToolListChanges) TakeAccepted() bool { return c.accepted.Swap(false) }
