package contracts_test

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/internal/golden"
)

// fingerprintOf computes tool_scope_sha256 independently of the package: the
// SHA-256 of the compact JSON array of the sorted names, written by hand.
func fingerprintOf(names ...string) string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	text := "["
	for i, n := range sorted {
		if i > 0 {
			text += ","
		}
		text += `"` + n + `"` // tool names need no escaping (checked by TestNamesAndOperationIDs)
	}
	text += "]"
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

func TestToolSets(t *testing.T) {
	want := map[string][]string{
		"read-only-incident-review":           {"aura_get_mission", "aura_get_trace", "aura_get_skill", "aura_get_coverage"},
		"governed-mission-creation":           {"aura_search_capabilities", "aura_submit_intent", "aura_create_mission", "aura_get_mission"},
		"purpose-filtered-context":            {"aura_query_memory"},
		"purpose-filtered-context-with-goals": {"aura_query_memory", "aura_list_goals"},
		"aura": {"aura_submit_intent", "aura_create_mission", "aura_get_mission", "aura_signal_mission", "aura_cancel_mission",
			"aura_search_capabilities", "aura_query_memory", "aura_get_skill", "aura_get_trace", "aura_list_goals",
			"aura_list_world_certificates", "aura_get_coverage"},
		"praxec": {"praxec.query", "praxec.command"},
		"all":    contracts.Names(),
	}
	sets := contracts.ToolSets()
	seen := map[string]bool{}
	for _, s := range sets {
		t.Run(s.Name, func(t *testing.T) {
			if seen[s.Name] {
				t.Fatalf("tool set %q is listed twice", s.Name)
			}
			seen[s.Name] = true
			w, ok := want[s.Name]
			if !ok {
				t.Fatalf("unexpected tool set %q", s.Name)
			}
			if !slices.Equal(s.Tools, w) {
				t.Errorf("tools %v, want %v", s.Tools, w)
			}
			if s.Description == "" {
				t.Error("no description")
			}
			if s.Fingerprint != fingerprintOf(w...) {
				t.Errorf("fingerprint %s, want %s", s.Fingerprint, fingerprintOf(w...))
			}
			for _, n := range s.Tools {
				if _, ok := contracts.Lookup(n); !ok {
					t.Errorf("names unknown tool %q", n)
				}
				if !s.Contains(n) {
					t.Errorf("Contains(%q) = false", n)
				}
			}
			if s.Contains("AURA_GET_MISSION") || s.Contains("") {
				t.Error("Contains matches a name it does not hold")
			}
			got, ok := contracts.LookupToolSet(s.Name)
			if !ok || !slices.Equal(got.Tools, s.Tools) || got.Fingerprint != s.Fingerprint {
				t.Errorf("LookupToolSet(%q) = %+v, %v", s.Name, got, ok)
			}
		})
	}
	if len(seen) != len(want) {
		t.Errorf("%d tool sets, want %d", len(seen), len(want))
	}
	if _, ok := contracts.LookupToolSet("Read-Only-Incident-Review"); ok {
		t.Error("LookupToolSet is not exact")
	}

	// The read-only set enables no mutation.
	ro, _ := contracts.LookupToolSet(contracts.SetReadOnlyIncidentReview)
	for _, n := range ro.Tools {
		if tool, _ := contracts.Lookup(n); tool.Mutates() || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s in the read-only set mutates", n)
		}
	}
	// Trusted code chooses compartment and purpose for the context sets: their
	// tools take both.
	for _, name := range []string{contracts.SetPurposeFilteredContext, contracts.SetPurposeFilteredWithGoals} {
		s, _ := contracts.LookupToolSet(name)
		for _, n := range s.Tools {
			tool, _ := contracts.Lookup(n)
			props, req := properties(t, tool.InputSchema)
			for _, k := range []string{"compartment", "purpose"} {
				if _, ok := props[k]; !ok || !slices.Contains(req, k) {
					t.Errorf("%s: %s does not require %s", name, n, k)
				}
			}
		}
	}
}

func TestFingerprint(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{nil, fingerprintOf()},
		{[]string{}, fingerprintOf()},
		{[]string{"aura_get_mission"}, fingerprintOf("aura_get_mission")},
		{[]string{"b", "a"}, fingerprintOf("a", "b")},
		{[]string{"a", "b", "a"}, fingerprintOf("a", "b")},
	}
	for _, tt := range tests {
		if got := contracts.Fingerprint(tt.names); got != tt.want {
			t.Errorf("Fingerprint(%q) = %s, want %s", tt.names, got, tt.want)
		}
	}
	// The empty set hashes "[]", never "null".
	if got, want := contracts.Fingerprint(nil), "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"; got != want {
		t.Errorf("Fingerprint(nil) = %s, want sha256(\"[]\") %s", got, want)
	}
	// Order never matters, and the argument is not reordered in place.
	names := []string{"aura_get_trace", "aura_get_mission", "aura_get_coverage", "aura_get_skill"}
	orig := slices.Clone(names)
	a := contracts.Fingerprint(names)
	if !slices.Equal(names, orig) {
		t.Errorf("Fingerprint sorted its argument in place: %v", names)
	}
	slices.Reverse(names)
	if b := contracts.Fingerprint(names); a != b {
		t.Errorf("the fingerprint depends on order: %s vs %s", a, b)
	}
	ro, _ := contracts.LookupToolSet(contracts.SetReadOnlyIncidentReview)
	if a != ro.Fingerprint {
		t.Errorf("read-only-incident-review fingerprint %s, want %s", ro.Fingerprint, a)
	}
}

// TestToolSetsGolden pins every set's tools and fingerprint: a change to a
// set changes what hosts that pinned a fingerprint accept.
func TestToolSetsGolden(t *testing.T) {
	golden.Check(t, "testdata/toolsets.golden.json", marshalGolden(t, contracts.ToolSets()), "")
}

// The fingerprint of read-only-incident-review, pinned as a literal: it must
// only change together with the set. (Computed outside Go too:
// printf %s '["aura_get_coverage","aura_get_mission","aura_get_skill","aura_get_trace"]' | sha256sum)
const readOnlyIncidentReviewFingerprint = "129180fe7e991e24bdad764391aaafabe3f792ddac4efede881508b7e7099b83"

func TestPinnedFingerprint(t *testing.T) {
	s, _ := contracts.LookupToolSet(contracts.SetReadOnlyIncidentReview)
	if s.Fingerprint != readOnlyIncidentReviewFingerprint {
		t.Errorf("read-only-incident-review fingerprint %s, pinned %s", s.Fingerprint, readOnlyIncidentReviewFingerprint)
	}
}
