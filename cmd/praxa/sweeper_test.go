package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// TestServeSweepsExpiredLeases: praxa serve runs the lease sweeper on the
// configured TTL and counts its resolutions on /metrics. A start lease left
// by a gateway that stopped mid-call (written straight into the data
// directory's store, past its deadline) is resolved without any request.
func TestServeSweepsExpiredLeases(t *testing.T) {
	s := startSwept(t, "server: {leaseTTL: 2s}\n")
	st := s.store(t)
	ctx := context.Background()
	past := time.Now().Add(-time.Minute)
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertStartLease(ctx, store.StartLease{Tenant: devTenant, Ref: "run:run-stranded", DefinitionID: "deploy_pipeline",
			Fingerprint: "fp", Owner: "gw_stopped/st_1", CreatedAt: past, Deadline: past.Add(time.Second)})
	})
	if err != nil {
		t.Fatal(err)
	}
	s.waitMetric(t, "praxa_leases_swept_total", "1")
	err = st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		l, err := tx.GetStartLease(ctx, devTenant, "run:run-stranded")
		if err != nil || l.Status != http.StatusGatewayTimeout {
			t.Errorf("the stranded start lease: %+v, %v; want it resolved as 504", l, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
