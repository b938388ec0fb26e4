package testkit

import "sync"

// Parallel calls f(0) to f(n-1), each in its own goroutine, and once all
// have returned gives the errors they returned, in the order they
// returned them; nil when none did.
func Parallel(n int, f func(i int) error) []error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if err := f(i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}
