package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
)

// GetAuthInfo reports the credentials in use; after a 401 to Basic (first revision) it returns ErrNoAPIKey.
func (c *Client) GetAuthInfo(ctx context.Context) (*AuthInfo, error) {
	if !c.ReadsAuthInfo() {
		return nil, fmt.Errorf("apiclient: %s: %w", OpGetAuthInfo, ErrNoAPIKey)
	}
	basic := c.creds().bearer == ""
	info, err := doValue[AuthInfo](ctx, c, call{op: OpGetAuthInfo})
	var ae *APIError
	if basic && errors.As(err, &ae) && ae.StatusCode == http.StatusUnauthorized {
		atomic.StoreInt32(&c.basicAuthInfoRefused, 1)
		return nil, fmt.Errorf("apiclient: %s: Basic refused and %w: %w", OpGetAuthInfo, ErrNoAPIKey, err)
	}
	return info, err
}
