package apiclient

import (
	"context"
	"fmt"
)

// GetAuthInfo reports which credentials are in use (GET /auth/info). It
// authenticates with the API key as a Bearer token, and fails with
// ErrNoAPIKey, sending nothing, when none is configured.
func (c *Client) GetAuthInfo(ctx context.Context) (*AuthInfo, error) {
	if !c.HasAPIKey() {
		return nil, fmt.Errorf("apiclient: %s: %w", OpGetAuthInfo, ErrNoAPIKey)
	}
	return doValue[AuthInfo](ctx, c, call{op: OpGetAuthInfo})
}
