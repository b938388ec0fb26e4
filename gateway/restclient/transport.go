package restclient

import "net/http"

// BearerTransport sends every request through Base (nil:
// http.DefaultTransport) with the bearer token Token: the credential of an
// HTTP client that is not a Client, such as an MCP client of a gateway's
// /mcp.
type BearerTransport struct {
	// Token is the bearer credential.
	Token string
	// Base sends the requests.
	Base http.RoundTripper
}

// RoundTrip sends r, a copy of it with the Authorization header set.
func (b *BearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	base := b.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}
