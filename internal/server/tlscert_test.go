package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestMachineCertSurvivesRestarts: servers without a data directory given
// the same CertDir serve one certificate, across restarts and when they
// start together; the PEM clients download holds no key.
func TestMachineCertSurvivesRestarts(t *testing.T) {
	dir := t.TempDir()
	first := startTest(t, Config{CertDir: dir})
	second := startTest(t, Config{CertDir: dir})
	if !bytes.Equal(first.CertPEM, second.CertPEM) || len(first.CertPEM) == 0 {
		t.Fatal("two servers with one CertDir serve different certificates")
	}
	if strings.Contains(string(first.CertPEM), "PRIVATE KEY") {
		t.Fatal("the certificate clients download holds the private key")
	}
	if fresh := startTest(t, Config{}); bytes.Equal(fresh.CertPEM, first.CertPEM) {
		t.Fatal("a server without CertDir reused the machine's certificate")
	}

	// Processes starting at once on a new machine agree on one.
	dir2 := t.TempDir()
	pems := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range pems {
		wg.Go(func() {
			_, pem, err := machineCert(dir2, wall.Now())
			if err != nil {
				t.Error(err)
			}
			pems[i] = pem
		})
	}
	wg.Wait()
	for _, p := range pems[1:] {
		if !bytes.Equal(p, pems[0]) {
			t.Fatal("concurrent first starts made different certificates")
		}
	}
	entries, _ := os.ReadDir(dir2)
	if len(entries) != 1 || entries[0].Name() != machineCertFile {
		t.Fatalf("CertDir holds %v, want only %s", entries, machineCertFile)
	}

	// The file can be given to other nodes as --tls-cert and --tls-key.
	shared := filepath.Join(dir, machineCertFile)
	node := startTest(t, Config{TLSCert: shared, TLSKey: shared})
	if !bytes.Equal(node.CertPEM, first.CertPEM) {
		t.Fatal("a node given the machine's file as --tls-cert serves another certificate")
	}
}
