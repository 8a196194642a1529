package apiclient

import "context"

type answerKey struct{}

// WithAnswer makes a successful call store its raw answer in *dst, to relay it without re-encoding.
func WithAnswer(ctx context.Context, dst *[]byte) context.Context {
	return context.WithValue(ctx, answerKey{}, dst)
}

func recordAnswer(ctx context.Context, data []byte) {
	if dst, ok := ctx.Value(answerKey{}).(*[]byte); ok && dst != nil {
		*dst = data
	}
}
