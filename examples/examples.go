// Package examples holds the example configuration, praxec.yaml, embedded so
// that praxa serve --dev can load it when no configuration is given.
package examples

import _ "embed"

// PraxecYAML is the content of examples/praxec.yaml.
//
//go:embed praxec.yaml
var PraxecYAML []byte

// PraxecYAMLName is the name errors about PraxecYAML report.
const PraxecYAMLName = "examples/praxec.yaml"
