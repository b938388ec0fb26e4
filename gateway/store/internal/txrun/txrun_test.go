package txrun

import (
	"context"
	"errors"
	"testing"

	"github.com/praxa/praxa/gateway/store"
)

type ctxKey struct{}

// TestUpdate: Update calls fn with its context and answers what fn returns,
// and a panic in fn as an error naming the driver and the panic's value.
func TestUpdate(t *testing.T) {
	errFailed := errors.New("failed")
	ctx := context.WithValue(context.Background(), ctxKey{}, "mine")
	for _, c := range []struct {
		name string
		fn   func(context.Context, store.Tx) error
		want error // nil: Update returns nil
		text string
	}{
		{"nil", func(context.Context, store.Tx) error { return nil }, nil, ""},
		{"error", func(context.Context, store.Tx) error { return errFailed }, errFailed, "failed"},
		{"panic", func(context.Context, store.Tx) error { panic("boom") }, nil, "drv: update function panicked: boom"},
	} {
		called := false
		err := Update(ctx, "drv", func(ctx context.Context, tx store.Tx) error {
			called = ctx.Value(ctxKey{}) == "mine"
			return c.fn(ctx, tx)
		}, nil)
		if !called {
			t.Errorf("%s: fn did not run with Update's context", c.name)
		}
		if text := errText(err); text != c.text || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.text)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
