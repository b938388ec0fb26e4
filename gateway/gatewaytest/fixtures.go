package gatewaytest

import (
	_ "embed"
	"fmt"
)

// DeployWorkflowYAML is a configuration's workflows block
// (testdata/deploy.yaml) holding one workflow of one move and nothing
// outside: deploy, from planned, ship to done. The gateway package's
// tests read the file itself (they cannot import this package).
//
//go:embed testdata/deploy.yaml
var DeployWorkflowYAML string

// ReleaseWorkflowYAML is a configuration's workflows block
// (testdata/release.yaml) holding one workflow, release: from draft, a
// human step that, once approved, calls POST /deploy on the connection
// api, which the configuration it is appended to must declare.
//
//go:embed testdata/release.yaml
var ReleaseWorkflowYAML string

// RotateKeysWorkflowYAML is one entry of a configuration's workflows block
// (testdata/rotate-keys.yaml), indented to stand under workflows::
// rotate_keys, a workflow of one move that the example configuration
// does not define, for tests that add a workflow (a reload).
//
//go:embed testdata/rotate-keys.yaml
var RotateKeysWorkflowYAML string

// slowDeployYAML is SlowDeployConfig's configuration
// (testdata/slow-deploy.yaml), with a %s for the script.
//
//go:embed testdata/slow-deploy.yaml
var slowDeployYAML string

// SlowDeployConfig is a configuration whose requests time out after
// 500ms and whose one capability, slow.deploy, runs /bin/sh -c script (a
// real child process, stopped after 20s): tests make it outlive its
// request. script must not contain a single quote.
func SlowDeployConfig(script string) string {
	return fmt.Sprintf(slowDeployYAML, script)
}
