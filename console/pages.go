package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/pins"
	"github.com/praxa/praxa/gateway/store"
)

// page is what every template receives.
type page struct {
	Title string
	// Nav is the section the page belongs to (approvals, missions,
	// capabilities, audit).
	Nav string
	// Signed-in person: empty on the sign-in pages.
	Person, Subject, Tenant, CSRF string
	CanApprove                    bool
	Flash                         string
	Problem                       *problem
	// Next is where sign-in returns to; SignIn offers the sign-in link.
	Next   string
	SignIn bool
	// Redirect, when set, moves the browser on at once (meta refresh).
	Redirect string
	// Refresh is the queue's refresh period in seconds.
	Refresh int
	// Data is the page's own.
	Data any
}

// problem is a refusal or failure as a page shows it.
type problem struct {
	Title, Detail, Hint, Code string
}

var funcs = template.FuncMap{
	"json": func(v any) string {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return "?"
		}
		return string(b)
	},
	// time renders an RFC 3339 time as UTC text; the script rewrites it
	// in the viewer's time zone from the datetime attribute.
	"time": func(s string) template.HTML {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return template.HTML(template.HTMLEscapeString(s))
		}
		return template.HTML(`<time datetime="` + template.HTMLEscapeString(t.UTC().Format(time.RFC3339)) + `">` +
			template.HTMLEscapeString(t.UTC().Format("2006-01-02 15:04:05 UTC")) + `</time>`)
	},
	"guard": gateway.GuardText,
	// dict pairs the page with one approval for the decide form.
	"dict": func(p page, a gateway.ApprovalView) map[string]any { return map[string]any{"P": p, "A": a} },
	"list": func(s ...string) []string { return s },
}

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	names, err := templateFS.ReadDir("templates")
	if err != nil {
		return nil, err
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html")
	if err != nil {
		return nil, err
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(n.Name(), ".html")
		if name == "layout" || name == "parts" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+n.Name())
		if err != nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// render writes a page; u, when set, fills the signed-in person. A
// fragment (a page named *-fragment: the queue's list, which the script
// fetches in the background) has no place for the flash and leaves it to
// the next page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, u *who, p page) {
	fragment := strings.HasSuffix(name, "-fragment")
	if u != nil {
		p.Subject, p.Tenant, p.CSRF = u.principal.Subject, u.principal.Tenant, u.session.csrf
		p.Person = u.session.name
		if p.Person == "" {
			p.Person = u.principal.Subject
		}
		p.CanApprove = u.principal.HasScope(contracts.ScopeApprovalsWrite)
		if p.Flash == "" && !fragment {
			p.Flash = c.sessions.takeFlash(u.session.id)
		}
	}
	p.Refresh = c.o.RefreshSeconds
	var buf bytes.Buffer
	t := c.pages[name]
	entry := "layout.html"
	if fragment {
		entry = "fragment"
	}
	if err := t.ExecuteTemplate(&buf, entry, p); err != nil {
		c.o.Logger.ErrorContext(r.Context(), "console: render failed", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// fail renders a refusal of the service on the page of the section nav.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, u *who, nav string, err error) {
	ce := contracts.AsError(err)
	p := &problem{Title: codeTitle(ce.Code), Detail: ce.Message, Hint: ce.Hint, Code: string(ce.Code)}
	switch ce.Code {
	case contracts.CodeSelfApproval:
		p.Title = "You asked for this approval, so you cannot also grant it"
		p.Hint = "Another person with the approvals:write scope must approve it; you may reject it."
	case contracts.CodeInsufficientScope:
		p.Title = "Your sign-in does not allow this"
	}
	if ce.Code == contracts.CodeInternal {
		p.Detail = "Something failed inside the gateway; its log says what."
	}
	c.render(w, r, ce.Status(), "error", u, page{Title: p.Title, Nav: nav, Problem: p})
}

// queueData is the approvals queue.
type queueData struct {
	Approvals []gateway.ApprovalView
}

func (c *Console) queue(r *http.Request, u *who) (queueData, error) {
	list, err := c.o.Service.ViewApprovals(r.Context(), u.principal, "pending", 200)
	return queueData{Approvals: list.Approvals}, err
}

// queuePage serves the pending approvals.
func (c *Console) queuePage(w http.ResponseWriter, r *http.Request, u *who) {
	d, err := c.queue(r, u)
	if err != nil {
		c.fail(w, r, u, "approvals", err)
		return
	}
	c.render(w, r, http.StatusOK, "queue", u, page{Title: "Pending approvals", Nav: "approvals", Data: d})
}

// queueFragment serves the queue's list alone, for the page's refresh.
func (c *Console) queueFragment(w http.ResponseWriter, r *http.Request, u *who) {
	d, err := c.queue(r, u)
	if err != nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(contracts.AsError(err).Status())
		return
	}
	c.render(w, r, http.StatusOK, "queue-fragment", u, page{Data: d})
}

// approvalData is one approval's page.
type approvalData struct {
	Approval gateway.ApprovalView
	Done     bool
}

// approvalPage serves one approval: the target of a host's URL
// elicitation.
func (c *Console) approvalPage(w http.ResponseWriter, r *http.Request, u *who) {
	a, err := c.o.Service.ViewApproval(r.Context(), u.principal, chi.URLParam(r, "approvalId"))
	if err != nil {
		c.fail(w, r, u, "approvals", err)
		return
	}
	c.render(w, r, http.StatusOK, "approval", u, page{Title: "Approval " + a.ID, Nav: "approvals", Data: approvalData{Approval: a, Done: a.Status != "pending"}})
}

// resolve approves or rejects an approval (form member decision) through
// the service method REST and praxa approvals use, with the signed-in
// person as the principal; its refusals are the service's own.
func (c *Console) resolve(w http.ResponseWriter, r *http.Request, u *who) {
	id := chi.URLParam(r, "approvalId")
	var approve bool
	switch r.PostForm.Get("decision") {
	case "approve":
		approve = true
	case "reject":
	default:
		c.render(w, r, http.StatusBadRequest, "error", u, page{Title: "Refused", Nav: "approvals",
			Problem: &problem{Title: "Choose approve or reject"}})
		return
	}
	note := strings.TrimSpace(r.PostForm.Get("note"))
	if r := []rune(note); len(r) > 1000 {
		note = string(r[:1000])
	}
	rid, trace := c.o.IDs(r.Context())
	res, err := c.o.Service.ResolveApproval(r.Context(), u.principal, id, approve, note, rid, trace)
	if err != nil {
		var ce *contracts.Error
		if errors.As(err, &ce) && ce.Code != contracts.CodeInternal {
			// Show the approval with the refusal beside it.
			a, verr := c.o.Service.ViewApproval(r.Context(), u.principal, id)
			if verr == nil {
				p := &problem{Title: codeTitle(ce.Code), Detail: ce.Message, Hint: ce.Hint, Code: string(ce.Code)}
				if ce.Code == contracts.CodeSelfApproval {
					p.Title = "You asked for this approval, so you cannot also grant it"
					p.Hint = "Another person with the approvals:write scope must approve it; you may reject it."
				}
				if ce.Code == contracts.CodeInsufficientScope {
					p.Title = "Your sign-in does not allow this"
				}
				c.render(w, r, ce.Status(), "approval", u, page{Title: "Approval " + a.ID, Nav: "approvals", Problem: p,
					Data: approvalData{Approval: a, Done: a.Status != "pending"}})
				return
			}
		}
		c.fail(w, r, u, "approvals", err)
		return
	}
	verb := "rejected"
	if approve {
		verb = "approved"
	}
	c.sessions.setFlash(u.session.id, "You "+verb+" approval "+res.Approval.ID+"; mission "+res.Mission.Workflow.ID+
		" is now in state "+res.Mission.Workflow.State+".")
	http.Redirect(w, r, path.Join(Prefix, "approvals", res.Approval.ID), http.StatusSeeOther)
}

// missionsData is the missions list with its filter.
type missionsData struct {
	Missions            []gateway.MissionSummary
	Definition, State   string
	Status              string
	Definitions, States []string
}

// missionsPage lists the tenant's missions, filtered by definition, state
// and status (query members: names from the configuration, not tenant
// data).
func (c *Console) missionsPage(w http.ResponseWriter, r *http.Request, u *who) {
	q := r.URL.Query()
	f := store.MissionFilter{DefinitionID: strings.TrimSpace(q.Get("definition")), State: strings.TrimSpace(q.Get("state")),
		Status: strings.TrimSpace(q.Get("status"))}
	list, err := c.o.Service.ListMissions(r.Context(), u.principal, f, 200)
	if err != nil {
		c.fail(w, r, u, "missions", err)
		return
	}
	d := missionsData{Missions: list, Definition: f.DefinitionID, State: f.State, Status: f.Status}
	c.render(w, r, http.StatusOK, "missions", u, page{Title: "Missions", Nav: "missions", Data: d})
}

// missionData is one mission's page.
type missionData struct {
	Mission gateway.Projection
	History []audit.Event
	// HistoryProblem says why the history is not shown.
	HistoryProblem string
}

// read calls the read-only tool with args as the signed-in person, over the
// console surface, and decodes its answer into v; the error is the call's
// refusal or the decoding's failure.
func (c *Console) read(r *http.Request, u *who, tool string, args map[string]any, v any) error {
	rid, trace := c.o.IDs(r.Context())
	res := c.o.Service.Invoke(r.Context(), u.principal, gateway.Call{Tool: tool, Surface: gateway.SurfaceConsole,
		RequestID: rid, TraceID: trace, Args: func() (map[string]any, error) { return args, nil }})
	if res.Err != nil {
		return res.Err
	}
	return json.Unmarshal(res.Body, v)
}

// missionPage shows one mission, named by its runId (aura_get_mission):
// state, version, evidence, context, its pending approval, its links and
// its history.
func (c *Console) missionPage(w http.ResponseWriter, r *http.Request, u *who) {
	var d missionData
	err := c.read(r, u, contracts.ToolGetMission, map[string]any{"runId": chi.URLParam(r, "runId")}, &d.Mission)
	if err != nil {
		c.fail(w, r, u, "missions", err)
		return
	}
	if d.History, err = c.o.Service.MissionHistory(r.Context(), u.principal, d.Mission.Workflow.ID); err != nil {
		d.HistoryProblem = contracts.AsError(err).Message
	}
	c.render(w, r, http.StatusOK, "mission", u, page{Title: "Mission " + d.Mission.Workflow.ID, Nav: "missions", Data: d})
}

// tracePage shows the audit trail of one trace (aura_get_trace).
func (c *Console) tracePage(w http.ResponseWriter, r *http.Request, u *who) {
	id := chi.URLParam(r, "traceId")
	var d knowledge.TraceResult
	if err := c.read(r, u, contracts.ToolGetTrace, map[string]any{"traceId": id}, &d); err != nil {
		c.fail(w, r, u, "missions", err)
		return
	}
	events := make([]audit.Event, len(d.Events))
	for i, ev := range d.Events {
		events[i] = audit.Event{TraceEvent: ev} // no link to the trace shown
	}
	c.render(w, r, http.StatusOK, "trace", u, page{Title: "Trace " + id, Nav: "missions", Data: traceData{TraceID: d.TraceID, Events: events}})
}

// traceData is one trace's page.
type traceData struct {
	TraceID string
	Events  []audit.Event
}

// capabilitiesData is the capabilities page.
type capabilitiesData struct {
	Capabilities []gateway.CapabilityView
	// Quarantined are the imported capabilities whose upstream changed
	// their definition since it was pinned; CanAccept says the person may
	// review and accept them (capabilities:admin), with both definitions.
	Quarantined []pins.QuarantinedCapability
	CanAccept   bool
}

// capabilitiesPage lists the capabilities with their guards, and the
// quarantined ones.
func (c *Console) capabilitiesPage(w http.ResponseWriter, r *http.Request, u *who) {
	d, err := c.capabilities(r, u)
	if err != nil {
		c.fail(w, r, u, "capabilities", err)
		return
	}
	c.render(w, r, http.StatusOK, "capabilities", u, page{Title: "Capabilities", Nav: "capabilities", Data: d})
}

func (c *Console) capabilities(r *http.Request, u *who) (capabilitiesData, error) {
	list, err := c.o.Service.Capabilities(u.principal)
	if err != nil {
		return capabilitiesData{}, err
	}
	d := capabilitiesData{Capabilities: list, CanAccept: u.principal.HasScope(contracts.ScopeCapabilitiesAdmin)}
	if d.CanAccept {
		d.Quarantined, err = c.o.Service.Pins().Review(r.Context(), u.principal)
	} else {
		// What /readyz shows anyone: the names and reasons, without the
		// definitions under review.
		d.Quarantined = c.o.Service.Pins().Quarantined()
	}
	return d, err
}

// accept accepts the definition an upstream now offers for a quarantined
// capability: the hash the person reviewed goes with the form, so a
// definition changed again meanwhile is refused rather than accepted
// unseen.
func (c *Console) accept(w http.ResponseWriter, r *http.Request, u *who) {
	name := chi.URLParam(r, "name")
	rid, trace := c.o.IDs(r.Context())
	res, err := c.o.Service.Pins().Accept(r.Context(), u.principal, pins.AcceptRequest{Name: name,
		SHA256: r.PostForm.Get("sha256"), RequestID: rid, TraceID: trace})
	if err != nil {
		ce := contracts.AsError(err)
		if ce.Code == contracts.CodeInternal {
			c.fail(w, r, u, "capabilities", err)
			return
		}
		d, derr := c.capabilities(r, u)
		if derr != nil {
			c.fail(w, r, u, "capabilities", err)
			return
		}
		p := &problem{Title: codeTitle(ce.Code), Detail: ce.Message, Hint: ce.Hint, Code: string(ce.Code)}
		if ce.Code == contracts.CodeInsufficientScope {
			p.Title = "Your sign-in does not allow this"
		}
		c.render(w, r, ce.Status(), "capabilities", u, page{Title: "Capabilities", Nav: "capabilities", Problem: p, Data: d})
		return
	}
	c.sessions.setFlash(u.session.id, "You accepted the definition "+short(res.SHA256)+" of "+res.Capability+"; it can be called again.")
	http.Redirect(w, r, path.Join(Prefix, "capabilities"), http.StatusSeeOther)
}

// short is the first 12 hex digits of a hash, as the page shows it.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// codeTitle is the registered title of a code, else the code.
func codeTitle(c contracts.Code) string {
	if info, ok := c.Info(); ok && info.Title != "" {
		return info.Title
	}
	return string(c)
}

// auditPageSize is how many events one page of the audit trail shows.
const auditPageSize = 50

// auditData is the audit page: the filter as given, one page of events,
// and the links to the newest page and the next older one.
type auditData struct {
	Subject, Capability, Outcome, Since, Until string
	Before                                     int64
	Filtered                                   bool
	Events                                     []audit.Event
	// NewestURL and OlderURL are built here from the filter (url.Values),
	// never from text a template would need to trust.
	NewestURL, OlderURL template.URL
}

// auditPage lists the tenant's audit events, newest first, filtered by
// subject, capability, outcome and time (query members; times in UTC as
// the form's datetime-local fields give them, or RFC 3339), a page at a
// time (before: the seq the previous page ended at). The service decides
// the scope (traces:read), the tenant and the redaction.
func (c *Console) auditPage(w http.ResponseWriter, r *http.Request, u *who) {
	q := r.URL.Query()
	d := auditData{Subject: strings.TrimSpace(q.Get("subject")), Capability: strings.TrimSpace(q.Get("capability")),
		Outcome: strings.TrimSpace(q.Get("outcome")), Since: strings.TrimSpace(q.Get("since")), Until: strings.TrimSpace(q.Get("until"))}
	d.Filtered = d.Subject != "" || d.Capability != "" || d.Outcome != "" || d.Since != "" || d.Until != ""
	aq := audit.Query{Subject: d.Subject, Capability: d.Capability, Outcome: d.Outcome}
	var bad []string
	var err error
	if aq.Since, err = formTime(d.Since); err != nil {
		bad = append(bad, "Since: "+err.Error())
	}
	if aq.Until, err = formTime(d.Until); err != nil {
		bad = append(bad, "Until: "+err.Error())
	}
	if b := q.Get("before"); b != "" {
		if aq.Before, err = strconv.ParseInt(b, 10, 64); err != nil || aq.Before <= 0 {
			bad = append(bad, "The page asked for does not exist: start again from the newest events.")
			aq.Before = 0
		}
	}
	d.Before = aq.Before
	filter := url.Values{}
	for k, v := range map[string]string{"subject": d.Subject, "capability": d.Capability, "outcome": d.Outcome, "since": d.Since, "until": d.Until} {
		if v != "" {
			filter.Set(k, v)
		}
	}
	d.NewestURL = auditURL(filter)
	render := func(status int, p *problem) {
		c.render(w, r, status, "audit", u, page{Title: "Audit trail", Nav: "audit", Problem: p, Data: d})
	}
	if len(bad) > 0 {
		render(http.StatusBadRequest, &problem{Title: "The filter is not valid", Detail: strings.Join(bad, " "), Code: string(contracts.CodeInvalidParams)})
		return
	}
	rid, trace := c.o.IDs(r.Context())
	res, err := c.o.Auditor.Events(r.Context(), u.principal, aq, auditPageSize, rid, trace)
	if err != nil {
		ce := contracts.AsError(err)
		if ce.Code != contracts.CodeInvalidParams {
			c.fail(w, r, u, "audit", err)
			return
		}
		detail := ce.Message
		for _, f := range ce.Fields {
			detail += "; " + strings.TrimPrefix(f.Pointer, "/") + ": " + f.Detail
		}
		render(ce.Status(), &problem{Title: "The filter is not valid", Detail: detail, Code: string(ce.Code)})
		return
	}
	d.Events = res.Events
	if res.Older > 0 {
		older := url.Values{}
		for k, v := range filter {
			older[k] = v
		}
		older.Set("before", strconv.FormatInt(res.Older, 10))
		d.OlderURL = auditURL(older)
	}
	render(http.StatusOK, nil)
}

// auditURL is the audit page's address with the query v.
func auditURL(v url.Values) template.URL {
	if len(v) == 0 {
		return template.URL(Prefix + "/audit")
	}
	return template.URL(Prefix + "/audit?" + v.Encode())
}

// formTimeLayouts are the times the audit filter reads: a datetime-local
// field's (with or without seconds, taken as UTC), and RFC 3339.
var formTimeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano}

// formTime reads a time of the audit filter; "" is the zero time.
func formTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range formTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("not a time: give it as 2026-12-07T10:30 (UTC) or in RFC 3339")
}
