package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// reliability checks the reliability of the capability or exposure at
// ptr: its fallback executors reach connections (Kind.NeedsConnection,
// declared, of their kind), retries and fallback sit on a capability whose
// executor reaches a connection, and the longest its call may take (its
// timeoutMs alone included) fits in the lease TTL.
func (c *checker) reliability(ptr string, wfIDs []string) {
	rp := ptr + "/reliability"
	rel, ok := c.obj(rp)
	if !ok {
		return
	}
	items, _ := c.list(rp + "/fallback/executors")
	for i := range items {
		xp := rp + "/fallback/executors/" + strconv.Itoa(i)
		if kind, ok := c.str(xp + "/kind"); ok && !Kind(kind).NeedsConnection() {
			c.report(xp+"/kind", "is %s, which cannot be a fallback executor: a fallback calls another connection when the executor's could not be reached, so its kind is %s", kind, joinOr(connectionKindNames()))
		}
		c.executor(xp, wfIDs)
	}
	var members []string
	if n, ok := rel["retries"].(json.Number); ok && n.String() != "0" {
		members = append(members, "retries")
	}
	if _, ok := rel["fallback"]; ok {
		members = append(members, "fallback")
	}
	primary, found := c.capabilityExecutor(ptr, 0)
	if !found {
		return // a broken wraps or reference, reported on its own
	}
	if len(members) > 0 && (primary == nil || !primary.Kind.NeedsConnection()) {
		kind := ExecutorNoop
		if primary != nil {
			kind = primary.Kind
		}
		for _, m := range members {
			c.reportKey(rp+"/"+m, "applies to executors of kind %s, and this capability's executor is %s: there is no connection call to try again", joinAnd(connectionKindNames()), kind)
		}
		return
	}
	if primary == nil || !primary.Kind.NeedsConnection() && primary.Kind.Runs() != RunBranches {
		return // nothing leaves the gateway: no lease to outlast
	}
	var r Reliability
	if c.reportedUnder(rp) || !c.decode(rp, &r) {
		return // its values are out of bounds: the schema said so
	}
	if primary.Kind.Runs() == RunBranches {
		// The branches run at once under the one lease of the move: the
		// longest of them must fit in it.
		longest, worst := "", time.Duration(0)
		for _, name := range slices.Sorted(maps.Keys(primary.Branches)) {
			if b := primary.Branches[name]; b.Kind.NeedsConnection() && r.WorstCase(b) > worst {
				longest, worst = name, r.WorstCase(b)
			}
		}
		if ttl := c.leaseTTL(); worst > ttl {
			c.reportKey(rp, "lets branch %s of the parallel executor take up to %s, longer than the %s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: lower its timeoutMs or reliability.timeoutMs, or raise server.leaseTTL",
				longest, worst.Round(time.Second), ttl)
		}
		return
	}
	c.leaseBound(rp, &r, *primary, c.leaseTTL())
}

// executorTimeout reports the executor at ptr when one call of it may
// outlast the lease TTL (see leaseBound): its timeoutMs, or the default
// timeout when it sets none, is longer.
func (c *checker) executorTimeout(ptr string, kind Kind) {
	if !kind.NeedsConnection() || c.reportedUnder(ptr+"/timeoutMs") {
		return
	}
	var x Executor
	c.decode(ptr+"/timeoutMs", &x.TimeoutMs)
	if x.TimeoutMs == 0 {
		// A capability's executors take reliability.timeoutMs when they
		// set none; leaseBound checks them with it.
		rel := strings.TrimSuffix(ptr, "/executor") + "/reliability"
		if i := strings.Index(ptr, "/reliability/"); i >= 0 {
			rel = ptr[:i] + "/reliability"
		}
		if i := strings.Index(ptr, "/executor/branches/"); i >= 0 {
			rel = ptr[:i] + "/reliability" // a parallel executor's branch
		}
		var ms int
		if c.decode(rel+"/timeoutMs", &ms) && ms > 0 {
			return
		}
	}
	d, ttl := ExecutorTimeout(x), c.leaseTTL()
	switch {
	case d <= ttl:
	case x.TimeoutMs > 0:
		c.report(ptr+"/timeoutMs", "lets one call take %s, longer than the %s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: lower timeoutMs or raise server.leaseTTL", d, ttl)
	default:
		c.reportKey(ptr, "sets no timeoutMs, so one call may take the default %s, longer than the %s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: set a shorter timeoutMs or raise server.leaseTTL", d, ttl)
	}
}

// leaseTTL is how long a lease holds, the bound of leaseBound:
// server.leaseTTL, else DefaultLeaseTTL (as Config.LeaseTTL reads it).
func (c *checker) leaseTTL() time.Duration {
	var d Duration
	if !c.reportedUnder("/server/leaseTTL") && c.decode("/server/leaseTTL", &d) && d > 0 {
		return d.Std()
	}
	return DefaultLeaseTTL
}

// leaseBound reports the reliability at ptr when a call of primary under r
// may outlast the lease TTL ttl: the lease a move takes before calling
// outside keeps another gateway from taking it for lost (and recording it
// as outcome-unknown) while its call still runs, so every attempt, retry
// and fallback must end before it does.
func (c *checker) leaseBound(ptr string, r *Reliability, primary Executor, ttl time.Duration) {
	worst := r.WorstCase(primary)
	if worst <= ttl {
		return
	}
	var parts []string
	waits := ""
	for i, x := range r.Executors(primary) {
		what := "the executor"
		if i > 0 {
			what = "fallback " + strconv.Itoa(i)
		}
		retries, shared := r.RetriesFor(x.Kind)
		attempts := retries + 1
		if shared {
			attempts = 1
		}
		if attempts > 1 {
			waits = ", plus the waits between retries"
		}
		parts = append(parts, fmt.Sprintf("%s %d × %s", what, attempts, ExecutorTimeout(x)))
	}
	c.reportKey(ptr, "lets one call take up to %s (%s%s), longer than the %s lease (server.leaseTTL) that keeps another gateway from repeating the move meanwhile: lower timeoutMs, retries or the number of fallback executors, or raise server.leaseTTL",
		worst.Round(time.Second), strings.Join(parts, ", "), waits, ttl)
}

// capabilityExecutor returns the executor the capability or exposure at ptr
// runs (nil for noop), following wraps and capability references; found is
// false when a reference leads nowhere.
func (c *checker) capabilityExecutor(ptr string, depth int) (x *Executor, found bool) {
	if depth > maxWraps {
		return nil, false
	}
	if _, ok := c.obj(ptr + "/executor"); ok {
		var e Executor
		if !c.decode(ptr+"/executor", &e) {
			return nil, false
		}
		return &e, true
	}
	next, ok := c.str(ptr + "/wraps")
	if !strings.HasPrefix(ptr, "/capabilities/") {
		next, ok = c.str(ptr + "/capability")
	}
	if !ok {
		return nil, true
	}
	target := "/capabilities/" + escapePointer(next)
	if _, ok := c.obj(target); !ok {
		return nil, false
	}
	return c.capabilityExecutor(target, depth+1)
}

// reportedUnder reports whether the schema reported a value at ptr or
// below it.
func (c *checker) reportedUnder(ptr string) bool {
	for p := range c.reported {
		if p == ptr || strings.HasPrefix(p, ptr+"/") {
			return true
		}
	}
	return false
}

// decode decodes the value at ptr into v; false when it does not fit (the
// schema reported it).
func (c *checker) decode(ptr string, v any) bool {
	raw, ok := lookup(c.doc.value, ptr)
	if !ok {
		return false
	}
	b, err := json.Marshal(raw)
	return err == nil && json.Unmarshal(b, v) == nil
}
