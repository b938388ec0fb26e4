package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/reload"
)

// testCert is a self-signed certificate for 127.0.0.1 and its key, PEM.
type testCert struct {
	certPEM, keyPEM []byte
	serial          int64
}

func newTestCert(t *testing.T, serial int64, notAfter time.Time) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "praxa test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     notAfter,
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return testCert{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		serial:  serial,
	}
}

// write puts the certificate and key at the two paths, replacing each
// file by a rename (as a Secret update or certbot does).
func (c testCert) write(t *testing.T, certFile, keyFile string) {
	t.Helper()
	writeAtomically(t, certFile, c.certPEM)
	writeAtomically(t, keyFile, c.keyPEM)
}

func writeAtomically(t *testing.T, path string, b []byte) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestCertificateReload: the pair is read again once its files change
// and certCheckEvery has passed; a pair that does not load (a renewed
// certificate whose key is not there yet) leaves the previous one serving,
// and the right key then loads.
func TestCertificateReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	a, b, c := newTestCert(t, 1, time.Now().Add(time.Hour)), newTestCert(t, 2, time.Now().Add(time.Hour)), newTestCert(t, 3, time.Now().Add(time.Hour))
	a.write(t, certFile, keyFile)
	var logs bytes.Buffer
	cert, err := loadCertificate(certFile, keyFile, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	cert.now = func() time.Time { return clock }
	serial := func() int64 {
		t.Helper()
		got, err := cert.get(nil)
		if err != nil {
			t.Fatal(err)
		}
		return got.Leaf.SerialNumber.Int64()
	}
	for _, step := range []struct {
		what    string
		change  func()
		advance bool   // let certCheckEvery pass first
		serial  int64  // the certificate served after it
		logged  string // what the log then says
	}{
		{what: "at start", change: func() {}, serial: 1},
		{what: "renewed, before certCheckEvery passed", change: func() { b.write(t, certFile, keyFile) }, serial: 1},
		{what: "renewed, certCheckEvery passed", change: func() {}, advance: true, serial: 2, logged: "TLS certificate reloaded"},
		{what: "a new certificate with the previous key", change: func() { writeAtomically(t, certFile, c.certPEM) }, advance: true,
			serial: 2, logged: "does not load: serving the previous one"},
		{what: "its key arrived", change: func() { writeAtomically(t, keyFile, c.keyPEM) }, advance: true, serial: 3},
	} {
		logs.Reset()
		step.change()
		if step.advance {
			clock = clock.Add(certCheckEvery)
		}
		if s := serial(); s != step.serial {
			t.Errorf("%s: serving serial %d, want %d", step.what, s, step.serial)
		}
		if !strings.Contains(logs.String(), step.logged) {
			t.Errorf("%s: the log does not say %q: %s", step.what, step.logged, logs.String())
		}
	}
}

// TestLoadCertificateRefusals: what does not load at start stops serve
// with an error naming the flag.
func TestLoadCertificateRefusals(t *testing.T) {
	dir := t.TempDir()
	good := newTestCert(t, 1, time.Now().Add(time.Hour))
	expired := newTestCert(t, 2, time.Now().Add(-time.Minute))
	other := newTestCert(t, 3, time.Now().Add(time.Hour))
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, cert, key, want string
	}{
		{"no certificate", filepath.Join(dir, "absent.crt"), file("k1", good.keyPEM), "--tls-cert: open"},
		{"no key", file("c1", good.certPEM), filepath.Join(dir, "absent.key"), "--tls-key: open"},
		{"key and certificate swapped", file("c2", good.keyPEM), file("k2", good.certPEM), "holds a private key"},
		{"another certificate's key", file("c3", good.certPEM), file("k3", other.keyPEM), "private key does not match public key"},
		{"expired", file("c4", expired.certPEM), file("k4", expired.keyPEM), "expired at"},
	} {
		_, err := loadCertificate(tc.cert, tc.key, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestServeTLS: serve --tls-cert --tls-key answers over HTTPS (HTTP/2 and
// HTTP/1.1) at an https public URL, picks up a renewed certificate without
// a restart, and keeps its https URL across a reload; one flag without the
// other is a usage error.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first, renewed := newTestCert(t, 10, time.Now().Add(time.Hour)), newTestCert(t, 11, time.Now().Add(time.Hour))
	first.write(t, certFile, keyFile)
	saved := certCheckEvery
	certCheckEvery = 0 // every handshake looks at the files
	t.Cleanup(func() { certCheckEvery = saved })

	s := serveInProcess(t, serveFlags{dataDir: t.TempDir(), dev: true, tools: contracts.SetAll, tlsCert: certFile, tlsKey: keyFile})
	a, serveLog := s.app, s.log
	if !strings.HasPrefix(a.url, "https://127.0.0.1:") || !strings.Contains(serveLog.String(), "listening on "+a.url) {
		t.Fatalf("public URL %q; serve printed:\n%s", a.url, serveLog.String())
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(first.certPEM)
	roots.AppendCertsFromPEM(renewed.certPEM)
	get := func(h2 bool) (*http.Response, int64) {
		t.Helper()
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: h2, DisableKeepAlives: true}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(a.url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	if resp, serial := get(true); resp.StatusCode != 200 || resp.ProtoMajor != 2 || serial != 10 {
		t.Errorf("HTTP/2: %d %s, serial %d", resp.StatusCode, resp.Proto, serial)
	}
	if resp, _ := get(false); resp.StatusCode != 200 || resp.ProtoMajor != 1 {
		t.Errorf("HTTP/1.1: %d %s", resp.StatusCode, resp.Proto)
	}
	// Plain HTTP on the TLS port is refused.
	if resp, err := http.Get("http://" + strings.TrimPrefix(a.url, "https://") + "/healthz"); err == nil {
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP on the TLS port: %d", resp.StatusCode)
		}
		resp.Body.Close()
	}

	renewed.write(t, certFile, keyFile)
	if _, serial := get(true); serial != 11 {
		t.Errorf("after the renewal the gateway serves serial %d, want 11", serial)
	}
	// A reload completes the configuration as the start did.
	if _, err := a.gw.Reloader.Reload(context.Background(), reload.Trigger{Via: reload.ViaSignal}); err != nil {
		t.Fatalf("reload: %v", err)
	}
	reread, _, err := a.gw.Reloader.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.gw.Reloader.Prepare(reread)
	if got := reread.Server.PublicURL; got != a.url {
		t.Errorf("a reload completes the public URL as %q, want %q", got, a.url)
	}

	for _, args := range [][]string{{"serve", "--tls-cert", certFile}, {"serve", "--tls-key", keyFile}} {
		code, _, stderr := runCommand(t, args...)
		if code != 2 || !strings.Contains(stderr, "--tls-cert and --tls-key go together") {
			t.Errorf("%v: %d %s", args, code, stderr)
		}
	}
}

// TestListenAddr: without --addr or server.addr, serve listens on
// loopback only.
func TestListenAddr(t *testing.T) {
	for _, tc := range []struct {
		flag, configured, want string
	}{
		{"", "", "127.0.0.1:8080"},
		{"", "0.0.0.0:9000", "0.0.0.0:9000"},
		{"127.0.0.1:0", "0.0.0.0:9000", "127.0.0.1:0"},
	} {
		cfg := &config.Config{Server: config.Server{Addr: tc.configured}}
		if got, _ := listenAddr(tc.flag, cfg); got != tc.want {
			t.Errorf("listenAddr(%q, server.addr %q) = %q, want %q", tc.flag, tc.configured, got, tc.want)
		}
	}
	if host, _, _ := net.SplitHostPort(defaultAddr); !net.ParseIP(host).IsLoopback() {
		t.Errorf("the default address %s is not loopback", defaultAddr)
	}
}
