package testkit

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
)

// TestParallel: every f(i) runs once, and the errors of those that fail,
// and only those, come back once all have returned.
func TestParallel(t *testing.T) {
	var ran [16]atomic.Int32
	errs := Parallel(len(ran), func(i int) error {
		ran[i].Add(1)
		if i%5 == 0 {
			return fmt.Errorf("f(%d)", i)
		}
		return nil
	})
	for i := range ran {
		if n := ran[i].Load(); n != 1 {
			t.Errorf("f(%d) ran %d times", i, n)
		}
	}
	var got []string
	for _, err := range errs {
		got = append(got, err.Error())
	}
	slices.Sort(got)
	if want := []string{"f(0)", "f(10)", "f(15)", "f(5)"}; !slices.Equal(got, want) {
		t.Errorf("Parallel errors = %q, want %q", got, want)
	}
	if errs := Parallel(3, func(int) error { return nil }); errs != nil {
		t.Errorf("Parallel with no failure = %v, want nil", errs)
	}
}
