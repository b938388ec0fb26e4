package gateway

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/gateway/strictjson"
	"github.com/praxa/praxa/internal/testkit"
)

// TestFingerprint: the same request, whatever the spelling of its numbers,
// the order of its members or its key, has one fingerprint; another
// request has another; a version 1 fingerprint still matches the request
// it was made for.
func TestFingerprint(t *testing.T) {
	base := `{"idempotencyKey":"k1-0000000000000000","input":{"n":1,"list":[1.5,2],"big":9007199254740993},"goal":"x"}`
	same := []string{
		`{"goal":"x","input":{"big":9007199254740993,"list":[15e-1,2.0],"n":1.0},"idempotencyKey":"k2-0000000000000000"}`,
		`{"input":{"n":10E-1,"list":[1.50,0.2e1],"big":9.007199254740993e15},"goal":"x"}`,
	}
	other := []string{
		`{"goal":"x","input":{"n":1,"list":[1.5,2],"big":9007199254740992}}`,
		`{"goal":"x","input":{"n":1,"list":[2,1.5],"big":9007199254740993}}`,
		`{"goal":"x","input":{"n":"1","list":[1.5,2],"big":9007199254740993}}`,
		`{"goal":"y","input":{"n":1,"list":[1.5,2],"big":9007199254740993}}`,
	}
	fp, err := fingerprint("createMission", testkit.MustDecodeObject(t, base))
	if err != nil || !strings.HasPrefix(fp, fingerprintV2) {
		t.Fatalf("fingerprint: %q, %v", fp, err)
	}
	for _, s := range same {
		if got, _ := fingerprint("createMission", testkit.MustDecodeObject(t, s)); got != fp {
			t.Errorf("%s: another fingerprint than %s", s, base)
		}
	}
	for _, s := range other {
		if got, _ := fingerprint("createMission", testkit.MustDecodeObject(t, s)); got == fp {
			t.Errorf("%s: the fingerprint of %s", s, base)
		}
	}
	if got, _ := fingerprint("signalMission", testkit.MustDecodeObject(t, base)); got == fp {
		t.Errorf("another operation shares the fingerprint")
	}
	legacy, err := legacyFingerprint("createMission", testkit.MustDecodeObject(t, base))
	if err != nil {
		t.Fatal(err)
	}
	if !sameFingerprint(legacy, fp, "createMission", testkit.MustDecodeObject(t, base)) {
		t.Errorf("a version 1 fingerprint does not match its own request")
	}
	if sameFingerprint(legacy, fp, "createMission", testkit.MustDecodeObject(t, same[0])) {
		t.Errorf("a version 1 fingerprint matches another spelling: version 1 compared numbers as sent")
	}
}

// rawCommand sends praxec.command over REST with body as sent, keyed.
func rawCommand(s *Service, key, body string) *Result {
	return s.Invoke(context.Background(), leaseFixPrincipal, Call{Tool: contracts.ToolPraxecCommand, Surface: SurfaceREST,
		Key: key, KeySent: true, Args: func() (map[string]any, error) { return strictjson.DecodeObject([]byte(body), 0) }})
}

// TestKeyReplaysEqualNumbers: a retry whose numbers are spelt otherwise
// (1.0 for 1) replays; a different decimal is another request (422); a
// record stored with a version 1 fingerprint replays to its request.
func TestKeyReplaysEqualNumbers(t *testing.T) {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "praxa.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := leaseFixService(t, st, nil, nil)
	const key = "numbers-key-0000000001"
	first := rawCommand(s, key, `{"definitionId":"pick","input":{"n":1,"limit":9007199254740993}}`)
	wantOK(t, "first", first)
	for _, body := range []string{
		`{"definitionId":"pick","input":{"n":1.0,"limit":9007199254740993}}`,
		`{"input":{"limit":9.007199254740993e15,"n":10e-1},"definitionId":"pick"}`,
	} {
		res := rawCommand(s, key, body)
		if res.Err != nil || !res.Replayed || string(res.Body) != string(first.Body) {
			t.Errorf("%s: %v replayed %v, want the first answer replayed", body, res.Err, res.Replayed)
		}
	}
	for _, body := range []string{
		`{"definitionId":"pick","input":{"n":1.5,"limit":9007199254740993}}`,
		`{"definitionId":"pick","input":{"n":1,"limit":9007199254740992}}`,
	} {
		wantCode(t, body, rawCommand(s, key, body), contracts.CodeIdempotencyKeyReused)
	}

	// A record from before the change: version 1 fingerprint.
	const old = "numbers-key-0000000002"
	body := `{"definitionId":"pick","input":{"n":2}}`
	args, _ := strictjson.DecodeObject([]byte(body), 0)
	fp, err := legacyFingerprint("praxecCommand", args)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err = st.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIdempotency(ctx, store.IdempotencyRecord{Namespace: leaseFixPrincipal.Namespace(), Key: old, Operation: "praxecCommand",
			Fingerprint: fp, Status: 200, Body: []byte(`{"recorded":"before"}`), CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if res := rawCommand(s, old, body); res.Err != nil || !res.Replayed || string(res.Body) != `{"recorded":"before"}` {
		t.Errorf("version 1 record: %v %s replayed %v", res.Err, res.Body, res.Replayed)
	}
	wantCode(t, "version 1 record, other body", rawCommand(s, old, `{"definitionId":"pick","input":{"n":3}}`), contracts.CodeIdempotencyKeyReused)
}
