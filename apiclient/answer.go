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

// recordAnswer stores data where WithAnswer asked.
func recordAnswer(ctx context.Context, data []byte) {
	if dst, ok := ctx.Value(answerKey{}).(*[]byte); ok && dst != nil {
		*dst = data
	}
}
