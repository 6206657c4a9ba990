package auth

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// ParseKeyFile reads a key file (--key-file): one key per line as
// NAME=BASE64, with NAME one of primary, secondary, readonly and
// secondary-readonly; blank lines and lines starting with # are skipped.
// Only primary is required.
func ParseKeyFile(data []byte) (Keys, error) {
	var k Keys
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || value == "" {
			return Keys{}, fmt.Errorf("line %d: expected NAME=KEY, such as primary=%s", n, EmulatorKey[:8]+"…")
		}
		if seen[name] {
			return Keys{}, fmt.Errorf("line %d: %s is given twice", n, name)
		}
		seen[name] = true
		switch name {
		case "primary":
			k.Primary = value
		case "secondary":
			k.Secondary = value
		case "readonly":
			k.ReadOnly = value
		case "secondary-readonly":
			k.SecondaryReadOnly = value
		default:
			return Keys{}, fmt.Errorf("line %d: unknown key %q; the names are primary, secondary, readonly and secondary-readonly", n, name)
		}
	}
	if err := sc.Err(); err != nil {
		return Keys{}, err
	}
	if k.Primary == "" {
		return Keys{}, fmt.Errorf("no primary key (a line primary=KEY)")
	}
	// Check them as SetKeys will, so a bad file is refused whole.
	if _, err := NewVerifierKeys(k); err != nil {
		return Keys{}, err
	}
	return k, nil
}
