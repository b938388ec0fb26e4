package conformance

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/praxa/praxa/issuer"
)

// Issuer is the suite's own OIDC issuer, served over HTTP (discovery and
// JWKS) so that a target can be told to trust it for a run.
type Issuer struct {
	*issuer.Issuer
	srv  *http.Server
	done chan error
}

// StartIssuer serves a new issuer on addr (e.g. "127.0.0.1:8089"; port 0
// picks a free one). With keyDir empty it signs with a fresh RS256 key;
// otherwise with the key kept in keyDir (created on first use), so a target
// that cached the issuer's keys keeps trusting it across runs.
func StartIssuer(addr, keyDir string) (*Issuer, error) {
	var (
		iss *issuer.Issuer
		err error
	)
	if keyDir != "" {
		iss, err = issuer.LoadOrCreate(keyDir)
	} else {
		iss, err = issuer.New(issuer.Options{Algorithms: []string{issuer.RS256}})
	}
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("conformance: issuer: %w", err)
	}
	iss.SetIssuer("http://" + ln.Addr().String())
	i := &Issuer{Issuer: iss, srv: &http.Server{Handler: iss, ReadHeaderTimeout: 5 * time.Second}, done: make(chan error, 1)}
	go func() { i.done <- i.srv.Serve(ln) }()
	return i, nil
}

// URL is the issuer URL (the iss claim and the discovery base).
func (i *Issuer) URL() string { return i.Issuer.Issuer() }

// Tokens returns tokens signed by this issuer for a target whose resource
// identifier is audience.
func (i *Issuer) Tokens(audience string) *IssuerTokens {
	return &IssuerTokens{Issuer: i.Issuer, IssuerURL: i.URL(), Audience: audience}
}

// Close stops serving.
func (i *Issuer) Close() error {
	err := i.srv.Close()
	if serveErr := <-i.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
