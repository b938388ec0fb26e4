package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/praxa/praxa/gateway/config"
)

// defaultAddr is where praxa serve listens without --addr or server.addr:
// loopback only. Anything reachable from elsewhere is asked for by name.
const defaultAddr = "127.0.0.1:8080"

// listenAddr is the address serve listens on: --addr, else server.addr
// of the configuration, else defaultAddr; and where it came from
// (listen.go).
func listenAddr(flag string, cfg *config.Config) (string, listenSetting) {
	switch {
	case flag != "":
		return flag, listenSetting{name: "--addr"}
	case cfg.Server.Addr != "":
		return cfg.Server.Addr, listenSetting{name: "--addr", from: "server.addr of " + configLabel(cfg) + "; --addr overrides it"}
	}
	return defaultAddr, listenSetting{name: "--addr", from: "the default of --addr"}
}

// tlsCertUsage and tlsKeyUsage document --tls-cert and --tls-key.
const (
	tlsCertUsage = "serve HTTPS with this PEM certificate chain `FILE` (with --tls-key); the files are read again when they change"
	tlsKeyUsage  = "the PEM private key `FILE` of --tls-cert"
)

// checkTLSFlags refuses one of --tls-cert and --tls-key without the other.
func checkTLSFlags(f serveFlags) error {
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return errors.New("--tls-cert and --tls-key go together: give both (a PEM certificate chain and its key) or neither")
	}
	return nil
}

// completeConfig completes cfg for a gateway listening on addr (what
// config.Defaults does), its default public URL naming https when the
// gateway terminates TLS itself. serve and its reloads both use it.
func completeConfig(cfg *config.Config, addr string, tlsOn bool) {
	if tlsOn && cfg.Server.PublicURL == "" {
		cfg.Server.PublicURL = "https://" + addr
	}
	cfg.Defaults(addr)
}

// serverTLS is the TLS configuration of --tls-cert and --tls-key (nil
// without them): TLS 1.2 at least, the certificate read again when its
// files change.
func serverTLS(f serveFlags, log *slog.Logger) (*tls.Config, error) {
	if f.tlsCert == "" {
		return nil, nil
	}
	c, err := loadCertificate(f.tlsCert, f.tlsKey, log)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.get}, nil
}

// serveOn serves srv on ln: over TLS (HTTP/2 and HTTP/1.1) when
// srv.TLSConfig is set, else plain HTTP.
func serveOn(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}

// certCheckEvery is how often, at most, a handshake looks at the
// certificate's files for a change.
var certCheckEvery = time.Second

// certificate is a certificate and key read from two files, and read again
// when either changes (a renewal, a Kubernetes Secret updated in place):
// a handshake at least certCheckEvery after the last look reads both
// (a few kilobytes) and compares their digest with the one in use; a file's
// size and time can stay the same across a quick rotation, its bytes
// cannot. A pair that does not load (the certificate renewed and its key
// not yet) leaves the previous one in use, logged once, and is tried again
// at the next look.
type certificate struct {
	certFile, keyFile string
	log               *slog.Logger
	now               func() time.Time

	mu      sync.Mutex
	current *tls.Certificate
	loaded  [sha256.Size]byte // the digest of the files current was read from
	refused [sha256.Size]byte // the digest of the last pair that did not load
	checked time.Time
}

// loadCertificate reads the pair once; an error names the flags.
func loadCertificate(certFile, keyFile string, log *slog.Logger) (*certificate, error) {
	c := &certificate{certFile: certFile, keyFile: keyFile, log: log, now: time.Now}
	certPEM, keyPEM, err := c.readFiles()
	if err != nil {
		return nil, err
	}
	pair, err := c.parse(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	c.current, c.loaded, c.checked = pair, pairDigest(certPEM, keyPEM), c.now()
	return c, nil
}

func (c *certificate) readFiles() (certPEM, keyPEM []byte, err error) {
	if certPEM, err = os.ReadFile(c.certFile); err != nil {
		return nil, nil, fmt.Errorf("--tls-cert: %w", err)
	}
	if keyPEM, err = os.ReadFile(c.keyFile); err != nil {
		return nil, nil, fmt.Errorf("--tls-key: %w", err)
	}
	return certPEM, keyPEM, nil
}

func pairDigest(certPEM, keyPEM []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write(certPEM)
	h.Write([]byte{0})
	h.Write(keyPEM)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// parse loads the pair; its certificate must be valid now.
func (c *certificate) parse(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	if bytes.Contains(certPEM, []byte("PRIVATE KEY")) {
		return nil, fmt.Errorf("--tls-cert %s holds a private key: give the certificate chain there and the key to --tls-key", c.certFile)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s and --tls-key %s: %w", c.certFile, c.keyFile, err)
	}
	if now := c.now(); now.After(pair.Leaf.NotAfter) {
		return nil, fmt.Errorf("--tls-cert %s expired at %s", c.certFile, pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return &pair, nil
}

// get is tls.Config.GetCertificate.
func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if now.Sub(c.checked) < certCheckEvery {
		return c.current, nil
	}
	c.checked = now
	certPEM, keyPEM, err := c.readFiles()
	if err != nil {
		// A file between its removal and its replacement: look again
		// next time.
		return c.current, nil
	}
	d := pairDigest(certPEM, keyPEM)
	if d == c.loaded || d == c.refused {
		return c.current, nil
	}
	pair, err := c.parse(certPEM, keyPEM)
	if err != nil {
		c.refused = d
		c.log.Warn("the TLS certificate changed but does not load: serving the previous one", "err", err)
		return c.current, nil
	}
	c.current, c.loaded = pair, d
	c.log.Info("TLS certificate reloaded", "cert", c.certFile, "subject", pair.Leaf.Subject.String(),
		"not_after", pair.Leaf.NotAfter.UTC().Format(time.RFC3339))
	return c.current, nil
}
