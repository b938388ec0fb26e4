package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/gateway/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		path := filepath.Join(t.TempDir(), "praxa.db")
		return storetest.Opener{Open: func(t *testing.T) store.Store {
			s, err := sqlitestore.Open(context.Background(), path, nil)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}}
	})
}
