// Package txrun holds what every store driver's Update does alike with the
// function it is given.
package txrun

import (
	"context"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
)

// Update calls fn(ctx, tx) and returns its error; when fn panics it returns
// "<driver>: update function panicked: <value>" instead, so that the driver
// discards fn's writes as it does those of a function that failed.
func Update(ctx context.Context, driver string, fn func(context.Context, store.Tx) error, tx store.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: update function panicked: %v", driver, r)
		}
	}()
	return fn(ctx, tx)
}
