package apiclient

import "context"

type answerKey struct{}

// WithAnswer returns a context under which a successful call stores its
// answer's body in *dst as received, so the admin surface relays it without
// a re-encoding that would drop unknown fields.
func WithAnswer(ctx context.Context, dst *[]byte) context.Context {
	return context.WithValue(ctx, answerKey{}, dst)
}

func recordAnswer(ctx context.Context, data []byte) {
	if dst, ok := ctx.Value(answerKey{}).(*[]byte); ok && dst != nil {
		*dst = data
	}
}
