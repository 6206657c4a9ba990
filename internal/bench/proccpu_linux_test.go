package bench

import (
	"os"
	"strings"
	"testing"
)

func TestProcessCPU(t *testing.T) {
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Skip(err)
	}
	if cpu, ok := processCPU(strings.TrimSpace(string(comm))); !ok || cpu < 0 {
		t.Errorf("this process (%q): %v, %v", comm, cpu, ok)
	}
	if cpu, ok := processCPU("no such process name"); ok || cpu != 0 {
		t.Errorf("a name no process has: %v, %v", cpu, ok)
	}
}
