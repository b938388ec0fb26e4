// Package examples holds the example configuration, praxec.yaml, embedded so
// that praxa serve --dev can load it when no configuration is given, with
// what it refers to and the example context data:
//
//   - skills/: the governed skills praxec.yaml's skills.dir names;
//   - memory.jsonl and goals.jsonl: memory records and goals for
//     praxa memory import and praxa goals import (compartments payments and
//     hr; the token serve --dev prints allows compartment payments and
//     purpose incident-review);
//   - certificates.jsonl: model capability certificates for
//     praxa certificates import, one of each verification result, signed by
//     the example issuer praxec.yaml trusts (regenerate them, with a new key,
//     by go run ./examples/internal/gencerts).
package examples

import "embed"

// PraxecYAML is the content of examples/praxec.yaml.
//
//go:embed praxec.yaml
var PraxecYAML []byte

// PraxecYAMLName is the name errors about PraxecYAML report.
const PraxecYAMLName = "examples/praxec.yaml"

// FS holds the example files under their names relative to examples/:
// praxec.yaml, skills/*.md, memory.jsonl, goals.jsonl and
// certificates.jsonl. A configuration parsed from PraxecYAML resolves
// skills.dir inside it.
//
//go:embed praxec.yaml skills memory.jsonl goals.jsonl certificates.jsonl
var FS embed.FS

// Root is how errors name the directory FS stands for.
const Root = "examples"
