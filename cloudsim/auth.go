package cloudsim

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func unauthorized(msg string) error {
	return &apiError{status: http.StatusUnauthorized, code: "UNAUTHORIZED", message: msg}
}

func forbidden(msg string) error {
	return &apiError{status: http.StatusForbidden, code: "FORBIDDEN", message: msg}
}

// equal is constant time, so the simulator does not teach a timing side channel.
func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// authenticate: the wrong scheme is as unauthenticated as none.
func (s *Sim) authenticate(r *http.Request, kind authKind) (*Credential, error) {
	creds := *s.creds.Load()
	header := r.Header.Get("Authorization")
	if header == "" {
		return nil, unauthorized("missing credentials")
	}
	if kind == authBearer && s.rev != Revision2024 && !strings.HasPrefix(strings.ToLower(header), "bearer ") {
		// Revision 2026 takes Basic on every path, /auth/info included.
		kind = authBasic
	}
	switch kind {
	case authBearer:
		scheme, token, ok := strings.Cut(header, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
			return nil, unauthorized("this operation takes a Bearer API key")
		}
		for i := range creds {
			if c := &creds[i]; c.APIKey != "" && equal(c.APIKey, token) {
				return c, nil
			}
		}
		return nil, unauthorized("invalid API key")
	default:
		access, secret, ok := r.BasicAuth()
		if !ok {
			return nil, unauthorized("this operation takes HTTP Basic access_key:secret_key")
		}
		for i := range creds {
			c := &creds[i]
			// Both always run, so the time does not tell which half was wrong.
			a, b := equal(c.AccessKey, access), equal(c.SecretKey, secret)
			if c.AccessKey != "" && a && b {
				return c, nil
			}
		}
		return nil, unauthorized("invalid access key or secret key")
	}
}

func authorize(c *Credential, projectID string, write bool) error {
	if projectID != "" && len(c.Projects) > 0 && !slices.Contains(c.Projects, projectID) {
		return forbidden("credential's user has no access to project " + projectID)
	}
	if projectID != "" && c.ProjectID != "" && c.ProjectID != projectID {
		return forbidden("credential does not belong to project " + projectID)
	}
	if write && c.ReadOnly {
		return forbidden("credential is read-only")
	}
	return nil
}

var simUser = apiclient.User{ID: "sim-user", Email: "operator@sim.clouddb.invalid", Name: "Simulated Operator"}

func (s *Sim) getAuthInfo(c *call) (int, any, error) {
	if s.rev != Revision2024 && len(c.cred.Projects) > 0 {
		return http.StatusOK, apiclient.AuthInfo{Type: "oauth", OAuth: &apiclient.OAuthInfo{User: simUser}}, nil
	}
	key := &apiclient.APIKeyInfo{
		Created:     apiclient.Time{Time: s.credsCreated},
		IssuingUser: simUser,
		Name:        c.cred.Name,
		Project:     apiclient.AuthProject{ID: c.cred.ProjectID, Name: c.cred.ProjectID, PlanType: "SIMULATED"},
		PublicKey:   publicKey(c.cred),
	}
	if s.rev == Revision2024 {
		return http.StatusOK, apiclient.AuthInfo{Type: "apiKey", APIKeyDeprecated: key}, nil
	}
	return http.StatusOK, apiclient.AuthInfo{Type: "apiKey", APIKey: key}, nil
}

// publicKey is not the access key, half of a secret pair: the public key is a label.
func publicKey(c *Credential) string {
	sum := sha256.Sum256([]byte(c.AccessKey + "\x00" + c.APIKey))
	return "pk-" + hex.EncodeToString(sum[:8])
}
