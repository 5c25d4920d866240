package httpapi_test

import (
	"net"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/httpapi"
)

func TestListenLoopbackAndFallback(t *testing.T) {
	first, fellBack, err := httpapi.Listen(0)
	if err != nil || fellBack {
		t.Fatalf("Listen(0) = %v, fellBack %v", err, fellBack)
	}
	defer first.Close()
	addr := first.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() {
		t.Errorf("bound to %v, want 127.0.0.1 only", addr.IP)
	}
	second, fellBack, err := httpapi.Listen(addr.Port)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if !fellBack || second.Addr().(*net.TCPAddr).Port == addr.Port {
		t.Errorf("taken port: fellBack=%v port=%d, want a different free port", fellBack, second.Addr().(*net.TCPAddr).Port)
	}
}
