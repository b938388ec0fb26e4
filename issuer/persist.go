package issuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// KeyFile is the name of the signing-key file LoadOrCreate keeps in its
// directory: a PKCS #8 private key in PEM, mode 0600.
const KeyFile = "issuer-key.pem"

// LoadOrCreate returns an Issuer whose one signing key lives in
// dir/KeyFile: the key is read when the file exists and generated (Ed25519,
// EdDSA) and written otherwise, so tokens minted before a restart, or by
// another process sharing the directory, stay valid. The key id is the key's
// RFC 7638 thumbprint, stable across restarts. An ES256 (P-256) key found in
// the file is used as well.
//
// The directory is created with mode 0700 and the file with mode 0600; an
// existing file that others may read or write is refused. Two processes
// starting at once agree on one key. The returned Issuer has no issuer URL
// yet: call SetIssuer (and SetPathPrefix when mounted under a path).
func LoadOrCreate(dir string) (*Issuer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("issuer: key directory: %w", err)
	}
	path := filepath.Join(dir, KeyFile)
	priv, err := readKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		priv, err = createKey(dir, path)
	}
	if err != nil {
		return nil, err
	}
	alg := EdDSA
	if _, ok := priv.(*ecdsa.PrivateKey); ok {
		alg = ES256
	}
	iss, err := New(Options{Algorithms: []string{}})
	if err != nil {
		return nil, err
	}
	if _, err := iss.AddPrivateKey(alg, "", priv); err != nil {
		return nil, fmt.Errorf("issuer: %s: %w", path, err)
	}
	return iss, nil
}

// readKey reads and parses the key file at path.
func readKey(path string) (crypto.Signer, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("issuer: key file: %w", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("issuer: key file %s has mode %v; it must not be accessible to others (chmod 600)", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("issuer: key file: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("issuer: key file %s: no PEM PRIVATE KEY block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("issuer: key file %s: %w", path, err)
	}
	switch k := k.(type) {
	case ed25519.PrivateKey:
		return k, nil
	case *ecdsa.PrivateKey:
		if k.Curve == elliptic.P256() {
			return k, nil
		}
	}
	return nil, fmt.Errorf("issuer: key file %s: want an Ed25519 or P-256 key, found %T", path, k)
}

// createKey generates an Ed25519 key and links it into place at path
// atomically; if another process got there first, its key wins.
func createKey(dir, path string) (crypto.Signer, error) {
	priv, err := GenerateKey(EdDSA)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("issuer: encode key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".issuer-key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("issuer: write key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return nil, fmt.Errorf("issuer: write key: %w", err)
	}
	if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("issuer: write key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("issuer: write key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("issuer: write key: %w", err)
	}
	// Link fails if path exists, so a concurrent creator's key is kept.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKey(path)
		}
		return nil, fmt.Errorf("issuer: write key: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the new directory entry durable; best effort
		d.Close()
	}
	return priv, nil
}
