package contracts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// ToolSet is a named selection of tools: the smallest sets of the Praxa
// contract ("Choose the smallest tool set") and the two surfaces.
type ToolSet struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tools       []string `json:"tools"`
	// Fingerprint is the SHA-256, in lowercase hex, of the compact UTF-8 JSON
	// array of the sorted tool names (tool_scope_sha256).
	Fingerprint string `json:"fingerprint"`
}

// Names of the tool sets.
const (
	SetAll                      = "all"
	SetAura                     = "aura"
	SetPraxec                   = "praxec"
	SetReadOnlyIncidentReview   = "read-only-incident-review"
	SetGovernedMissionCreation  = "governed-mission-creation"
	SetPurposeFilteredContext   = "purpose-filtered-context"
	SetPurposeFilteredWithGoals = "purpose-filtered-context-with-goals"
)

var toolSets = []ToolSet{
	{Name: SetAll, Description: "Every tool of the contract.", Tools: Names()},
	{Name: SetAura, Description: "The twelve aura_* tools.", Tools: []string{
		ToolSubmitIntent, ToolCreateMission, ToolGetMission, ToolSignalMission, ToolCancelMission, ToolSearchCapabilities,
		ToolQueryMemory, ToolGetSkill, ToolGetTrace, ToolListGoals, ToolListWorldCertificates, ToolGetCoverage}},
	{Name: SetPraxec, Description: "The praxec two-tool surface.", Tools: []string{ToolPraxecQuery, ToolPraxecCommand}},
	{Name: SetReadOnlyIncidentReview, Description: "Review an incident without any mutation: missions, traces, skills and coverage, read only.",
		Tools: []string{ToolGetMission, ToolGetTrace, ToolGetSkill, ToolGetCoverage}},
	{Name: SetGovernedMissionCreation, Description: "Find a capability, record intent, create a mission and follow it; each mutation needs host approval and one stable idempotency key.",
		Tools: []string{ToolSearchCapabilities, ToolSubmitIntent, ToolCreateMission, ToolGetMission}},
	{Name: SetPurposeFilteredContext, Description: "Purpose-filtered memory only; trusted code, not the model, chooses compartment and purpose.",
		Tools: []string{ToolQueryMemory}},
	{Name: SetPurposeFilteredWithGoals, Description: "Purpose-filtered memory and goals; trusted code, not the model, chooses compartment and purpose.",
		Tools: []string{ToolQueryMemory, ToolListGoals}},
}

func init() {
	for i := range toolSets {
		for _, n := range toolSets[i].Tools {
			if _, ok := catalogueIndex[n]; !ok {
				panic("contracts: tool set " + toolSets[i].Name + " names unknown tool " + n)
			}
		}
		toolSets[i].Fingerprint = Fingerprint(toolSets[i].Tools)
	}
}

// Fingerprint returns the SHA-256, in lowercase hex, of the compact UTF-8
// JSON array of the sorted, de-duplicated names.
func Fingerprint(names []string) string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	if sorted == nil {
		sorted = []string{}
	}
	b, err := json.Marshal(sorted)
	if err != nil {
		panic(err) // a []string always marshals
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ToolSets returns copies of every named tool set, in a stable order.
func ToolSets() []ToolSet {
	out := make([]ToolSet, len(toolSets))
	for i, s := range toolSets {
		s.Tools = slices.Clone(s.Tools)
		out[i] = s
	}
	return out
}

// LookupToolSet returns a copy of the named tool set.
func LookupToolSet(name string) (ToolSet, bool) {
	for _, s := range toolSets {
		if s.Name == name {
			s.Tools = slices.Clone(s.Tools)
			return s, true
		}
	}
	return ToolSet{}, false
}

// Contains reports whether the set includes the named tool.
func (s ToolSet) Contains(tool string) bool { return slices.Contains(s.Tools, tool) }
