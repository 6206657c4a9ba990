package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// machineCertFile is the file, in Config.CertDir, holding the machine's
// self-signed certificate and its key: one file, so that it is created
// atomically even when several Ebb processes start at once, and so that
// --tls-cert and --tls-key may both name it to share it.
const machineCertFile = "ebb-localhost.pem"

// machineCert returns the certificate kept in dir, making it on first
// use. Every Ebb on the machine that is given the same dir (cmd/ebb gives
// the user's configuration directory to --memory and --store servers)
// serves the same certificate, so trusting it once lasts.
func machineCert(dir string, now time.Time) (tls.Certificate, []byte, error) {
	path := filepath.Join(dir, machineCertFile)
	for attempt := 0; ; attempt++ {
		pemBytes, err := os.ReadFile(path)
		if err == nil {
			cert, err := tls.X509KeyPair(pemBytes, pemBytes)
			if err != nil {
				return tls.Certificate{}, nil, fmt.Errorf("load certificate %s (delete it to make a new one): %w", path, err)
			}
			return cert, certBlocks(pemBytes), nil
		}
		if !errors.Is(err, os.ErrNotExist) || attempt > 0 {
			return tls.Certificate{}, nil, err
		}
		certPEM, keyPEM, err := newSelfSigned(now)
		if err != nil {
			return tls.Certificate{}, nil, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return tls.Certificate{}, nil, err
		}
		tmp, err := os.CreateTemp(dir, machineCertFile+".*")
		if err != nil {
			return tls.Certificate{}, nil, err
		}
		_, werr := tmp.Write(append(append([]byte{}, certPEM...), keyPEM...))
		if cerr := tmp.Close(); werr == nil {
			werr = cerr
		}
		// Link fails if another process made the file first: then its
		// certificate is the machine's, and the next attempt reads it.
		if werr == nil {
			if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
				werr = err
			}
		}
		os.Remove(tmp.Name())
		if werr != nil {
			return tls.Certificate{}, nil, werr
		}
	}
}

// certBlocks is the CERTIFICATE blocks of a PEM file, which is what
// clients download to trust: never the key.
func certBlocks(pemBytes []byte) []byte {
	var out []byte
	for {
		var b *pem.Block
		b, pemBytes = pem.Decode(pemBytes)
		if b == nil {
			return out
		}
		if b.Type == "CERTIFICATE" {
			out = append(out, pem.EncodeToMemory(b)...)
		}
	}
}

// selfSignedCert returns the server's certificate and its PEM. With a
// data directory the pair is generated once and kept there, so clients
// that trusted it keep trusting it across restarts; without one (memory
// mode) it lives as long as the process.
func selfSignedCert(dataDir string, now time.Time) (tls.Certificate, []byte, error) {
	certPath := filepath.Join(dataDir, "ebb-cert.pem")
	keyPath := filepath.Join(dataDir, "ebb-key.pem")
	if dataDir != "" {
		certPEM, err1 := os.ReadFile(certPath)
		keyPEM, err2 := os.ReadFile(keyPath)
		if err1 == nil && err2 == nil {
			cert, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				return tls.Certificate{}, nil, fmt.Errorf("load certificate from %s: %w", dataDir, err)
			}
			return cert, certPEM, nil
		}
		if !errors.Is(err1, os.ErrNotExist) && err1 != nil {
			return tls.Certificate{}, nil, err1
		}
	}
	certPEM, keyPEM, err := newSelfSigned(now)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	if dataDir != "" {
		if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
			return tls.Certificate{}, nil, err
		}
		if err := os.WriteFile(certPath, certPEM, 0o644); err != nil {
			return tls.Certificate{}, nil, err
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	return cert, certPEM, err
}

// newSelfSigned makes a certificate for localhost, 127.0.0.1 and ::1,
// valid for five years from now, and its key, both PEM-encoded.
func newSelfSigned(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"Ebb"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(5, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return certPEM, keyPEM, nil
}
