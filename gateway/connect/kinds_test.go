package connect_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
)

// TestRunnersCoverConnectionKinds: a Manager and a Switch run exactly the
// executor kinds of config's table that call a connection, which are the
// connection kinds.
func TestRunnersCoverConnectionKinds(t *testing.T) {
	var want []config.Kind
	for _, k := range config.Kinds() {
		if k.NeedsConnection() {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	m := connect.New(nil, nil)
	defer m.Close()
	if got := slices.Sorted(maps.Keys(m.Runners())); !slices.Equal(got, want) {
		t.Errorf("Manager.Runners runs %v, the kinds that call a connection are %v", got, want)
	}
	if got := slices.Sorted(maps.Keys(connect.NewSwitch(m).Runners())); !slices.Equal(got, want) {
		t.Errorf("Switch.Runners runs %v, the kinds that call a connection are %v", got, want)
	}
	if conns := slices.Sorted(slices.Values(config.ConnectionKinds())); !slices.Equal(conns, want) {
		t.Errorf("the connection kinds are %v, the kinds that call one %v", conns, want)
	}
}
