package connect_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/connect/connecttest"
)

// TestSetupReloadRefusesUnlistedImport: at start (Setup) a proxy.import
// connection that cannot be listed is a problem; on a reload
// (SetupReload) it refuses the configuration with an *ImportError, which
// would otherwise drop the capabilities imported from it. A tool skipped
// (its id is taken) stays a problem either way.
func TestSetupReloadRefusesUnlistedImport(t *testing.T) {
	ctx := context.Background()
	parse := func(yaml string) *config.Config {
		t.Helper()
		cfg, err := config.Parse("praxec.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	const down = `
connections:
  ev: {kind: mcp, command: /bin/sh, args: [-c, "exit 1"]}
proxy:
  import:
    - connection: ev
`
	m, _, problems, err := connect.Setup(ctx, parse(down), &connect.Options{Logger: quiet()})
	if err != nil || len(problems) != 1 || !strings.HasPrefix(problems[0], "proxy.import[0]: ") {
		t.Fatalf("Setup: %v %v", problems, err)
	}
	m.Close()
	_, _, _, err = connect.SetupReload(ctx, parse(down), &connect.Options{Logger: quiet()})
	var ie *connect.ImportError
	if !errors.As(err, &ie) || len(ie.Problems) != 1 || !strings.HasPrefix(ie.Problems[0], "proxy.import[0]: ") {
		t.Fatalf("SetupReload: %v", err)
	}

	node, args := connecttest.Everything(t)
	taken := fmt.Sprintf(`
connections:
  ev: {kind: mcp, command: %q, args: [%q, %q]}
  sh: {kind: cli, command: /bin/sh}
proxy:
  import:
    - connection: ev
  expose:
    - name: ev.echo
      executor: {kind: cli, connection: sh, args: [-c, "true"]}
`, node, args[0], args[1])
	m, _, problems, err = connect.SetupReload(ctx, parse(taken), &connect.Options{Logger: quiet()})
	if err != nil {
		t.Fatalf("SetupReload refused a configuration whose only problem is a skipped tool: %v", err)
	}
	defer m.Close()
	if len(problems) != 1 || !strings.Contains(problems[0], "ev.echo skipped") {
		t.Fatalf("problems %v, want ev.echo skipped", problems)
	}
}
