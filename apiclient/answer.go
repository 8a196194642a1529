package apiclient

import "context"

type answerKey struct{}

// WithAnswer returns a context under which a successful call stores the
// body of its answer in *dst, as received: the admin surface relays it
// without a re-encoding that would drop the fields this client does not
// know or add the ones it has.
func WithAnswer(ctx context.Context, dst *[]byte) context.Context {
	return context.WithValue(ctx, answerKey{}, dst)
}

type reuseKey struct{}

// WithReuse returns a context under which a list read passes each element,
// as soon as it is decoded, to reuse: a pointer to it (*Service for
// ListServices), in which reuse may replace the element, or any of its
// fields, by an equal value the caller already holds. The list then shares
// that value's strings and slices, and the freshly decoded copy is garbage
// at once instead of living as long as the list: reading a large list
// again, unchanged, then costs the list's array, not a second copy of
// everything in it.
func WithReuse(ctx context.Context, reuse func(elem any)) context.Context {
	return context.WithValue(ctx, reuseKey{}, reuse)
}

func reuseOf(ctx context.Context) func(any) {
	reuse, _ := ctx.Value(reuseKey{}).(func(any))
	return reuse
}

// recordAnswer stores data where WithAnswer asked.
func recordAnswer(ctx context.Context, data []byte) {
	if dst, ok := ctx.Value(answerKey{}).(*[]byte); ok && dst != nil {
		*dst = data
	}
}
