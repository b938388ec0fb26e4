package config

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"github.com/praxa/praxa/contracts"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaJSON is the JSON Schema (2020-12) every praxec.yaml is validated
// against before it is decoded.
//
//go:embed schema.json
var schemaJSON []byte

// durationPattern is the pattern of a duration in schema.json; a violation of
// it is reported in words rather than as the pattern.
const durationPattern = `^[0-9]+(\.[0-9]+)?(ns|us|µs|μs|ms|s|m|h)([0-9]+(\.[0-9]+)?(ns|us|µs|μs|ms|s|m|h))*$`

// reservedSections are the top-level sections that later features own. The
// schema accepts each of them as an open object and the loader ignores it
// until its feature closes the schema.
var reservedSections = []string{
	"memory", "goals",
}

// The patterns of schema.json's identifier and evidenceName: the loader
// words their violations and checks mapping keys against them (a test holds
// them equal to the schema's).
const (
	identifierPattern   = contracts.IdentifierPattern
	evidenceNamePattern = `^[a-z][a-z0-9_.-]{0,63}$`
)

// idRE matches workflow ids and state names.
var idRE = regexp.MustCompile(identifierPattern)

// Schema returns the JSON Schema of praxec.yaml. The caller owns the copy.
func Schema() []byte { return slices.Clone(schemaJSON) }

// compiledSchema compiles the schema once.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	s, err := contracts.CompileSchema("praxec.yaml", schemaJSON)
	if err != nil {
		return nil, fmt.Errorf("config: the embedded schema does not compile: %w", err)
	}
	return s, nil
})
