package apiclient

import (
	"context"
	"fmt"
	"sync/atomic"
)

// GetAuthInfo reports the credentials in use; after a 401 to Basic (first revision) it returns ErrNoAPIKey.
func (c *Client) GetAuthInfo(ctx context.Context) (*AuthInfo, error) {
	if !c.ReadsAuthInfo() {
		return nil, fmt.Errorf("apiclient: %s: %w", OpGetAuthInfo, ErrNoAPIKey)
	}
	basic := c.creds().bearer == ""
	info, err := doValue[AuthInfo](ctx, c, call{op: OpGetAuthInfo})
	if basic && IsUnauthorized(err) {
		atomic.StoreInt32(&c.basicAuthInfoRefused, 1)
		return nil, fmt.Errorf("apiclient: %s: Basic refused and %w: %w", OpGetAuthInfo, ErrNoAPIKey, err)
	}
	return info, err
}
