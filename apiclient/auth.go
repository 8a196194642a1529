package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
)

// GetAuthInfo reports which credentials are in use (GET /auth/info), with
// the API key as a Bearer token, or else with Basic (revision 2026). Once
// the API refuses Basic there with 401 (the first revision), it fails with
// ErrNoAPIKey without sending, and ReadsAuthInfo turns false.
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
