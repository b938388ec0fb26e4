package gatewaytest

import _ "embed"

// ReleaseWorkflowYAML is a configuration's workflows block
// (testdata/release.yaml) holding one workflow, release: from draft, a
// human step that, once approved, calls POST /deploy on the connection
// api, which the configuration it is appended to must declare.
//
//go:embed testdata/release.yaml
var ReleaseWorkflowYAML string
