package dataplane

import (
	"sync"
	"sync/atomic"
)

// inParallel calls fn with each item, in order, on at most n goroutines at
// once, as an errgroup with a limit does. Each goroutine takes item after
// item, so that the stack the first call grows serves the next: a goroutine
// per call grew one through the HTTP client every time (6% of the CPU).
func inParallel[T any](n int, items []T, fn func(T)) {
	var next atomic.Int64
	inParallelFrom(n, len(items), func() (T, bool) {
		if i := next.Add(1) - 1; i < int64(len(items)) {
			return items[i], true
		}
		var none T
		return none, false
	}, fn)
}

// inParallelFrom is inParallel over the count items that next hands out,
// in order, safe for concurrent use.
func inParallelFrom[T any](n, count int, next func() (T, bool), fn func(T)) {
	var wg sync.WaitGroup
	for range min(max(n, 1), count) {
		wg.Go(func() {
			for item, ok := next(); ok; item, ok = next() {
				fn(item)
			}
		})
	}
	wg.Wait()
}
