package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// testListMissions: ListMissions lists the tenant's missions only, newest
// change first then by id descending, each filter field narrowing it, and
// within the limit; a mission staged in the transaction counts.
func testListMissions(t *testing.T, o Opener) {
	s := o.Open(t)
	mk := func(tenant, id, def, state, status string, updated time.Duration) store.Mission {
		m := mission(tenant, id, "run-"+id)
		m.DefinitionID, m.State, m.Status, m.UpdatedAt = def, state, status, epoch.Add(updated)
		return m
	}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return insertMissions(ctx, tx,
			mk("a", "wf_1", "deploy", "lint", "active", time.Minute),
			mk("a", "wf_2", "deploy", "done", "completed", 2*time.Minute),
			mk("a", "wf_3", "review", "lint", "active", 2*time.Minute),
			mk("b", "wf_4", "deploy", "lint", "active", time.Hour),
		)
	})
	ids := func(ms []store.Mission) []string { return each(ms, func(m store.Mission) string { return m.ID }) }
	cases := []struct {
		name  string
		f     store.MissionFilter
		limit int
		want  []string
	}{
		{"all", store.MissionFilter{}, 10, []string{"wf_3", "wf_2", "wf_1"}},
		{"limit", store.MissionFilter{}, 1, []string{"wf_3"}},
		{"definition", store.MissionFilter{DefinitionID: "deploy"}, 10, []string{"wf_2", "wf_1"}},
		{"state", store.MissionFilter{State: "lint"}, 10, []string{"wf_3", "wf_1"}},
		{"status", store.MissionFilter{Status: "completed"}, 10, []string{"wf_2"}},
		{"both", store.MissionFilter{DefinitionID: "review", State: "done"}, 10, []string{}},
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		for _, c := range cases {
			got, err := tx.ListMissions(ctx, "a", c.f, c.limit)
			if err != nil {
				t.Fatalf("%s: ListMissions: %v", c.name, err)
			}
			if !slices.Equal(ids(got), c.want) {
				t.Errorf("%s: ListMissions = %v, want %v", c.name, ids(got), c.want)
			}
		}
		return nil
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertMission(ctx, mk("a", "wf_5", "deploy", "lint", "active", 3*time.Minute)); err != nil {
			return err
		}
		got, err := tx.ListMissions(ctx, "a", store.MissionFilter{DefinitionID: "deploy"}, 10)
		if err != nil {
			return err
		}
		if want := []string{"wf_5", "wf_2", "wf_1"}; !slices.Equal(ids(got), want) {
			t.Errorf("staged: ListMissions = %v, want %v", ids(got), want)
		}
		return nil
	})
}

// testMissionEvents: MissionEvents reads the events naming one workflow,
// of every trace, within the tenant, in causal order and the limit;
// events staged in the transaction count too.
func testMissionEvents(t *testing.T, o Opener) {
	s := o.Open(t)
	ev := func(typ, tenant, trace, wf string, at time.Time) store.Event {
		return store.Event{Tenant: tenant, TraceID: trace, WorkflowID: wf, Type: typ, At: at, Subject: "alice", Outcome: "allowed"}
	}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{
			ev("started", "a", "tr-1", "wf_1", epoch),
			ev("other", "a", "tr-1", "wf_2", epoch.Add(time.Millisecond)),
			ev("none", "a", "tr-1", "", epoch.Add(time.Millisecond)),
			ev("foreign", "b", "tr-2", "wf_1", epoch.Add(2*time.Millisecond)),
			ev("moved", "a", "tr-3", "wf_1", epoch.Add(time.Second)),
		})
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		for _, c := range []struct {
			wf    string
			limit int
			want  []string
		}{
			{"wf_1", 10, []string{"started", "moved"}},
			{"wf_1", 1, []string{"started"}},
			{"", 10, []string{}},
			{"wf_9", 10, []string{}},
		} {
			got, err := tx.MissionEvents(ctx, "a", c.wf, c.limit)
			if err != nil {
				t.Fatalf("MissionEvents(%q): %v", c.wf, err)
			}
			if !slices.Equal(eventTypes(got), c.want) {
				t.Errorf("MissionEvents(%q, %d) = %v, want %v", c.wf, c.limit, eventTypes(got), c.want)
			}
		}
		return nil
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.AppendEvents(ctx, []store.Event{ev("staged", "a", "tr-4", "wf_1", epoch.Add(2*time.Second))}); err != nil {
			return err
		}
		got, err := tx.MissionEvents(ctx, "a", "wf_1", 10)
		if err != nil {
			return err
		}
		if want := []string{"started", "moved", "staged"}; !slices.Equal(eventTypes(got), want) {
			t.Errorf("staged: MissionEvents = %v, want %v", eventTypes(got), want)
		}
		return nil
	})
}
