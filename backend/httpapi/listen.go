package httpapi

import (
	"fmt"
	"net"
	"strconv"
)

// DefaultPort is the port `rerun serve` tries first.
const DefaultPort = 7777

// Listen binds 127.0.0.1:port (never another interface). When the port is
// taken it falls back to a free one and reports that it did; port 0 asks for a
// free one outright.
func Listen(port int) (ln net.Listener, fellBack bool, err error) {
	ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err == nil || port == 0 {
		return ln, false, err
	}
	ln, err2 := net.Listen("tcp", "127.0.0.1:0")
	if err2 != nil {
		return nil, false, fmt.Errorf("listen on 127.0.0.1:%d (%v) or any free port: %w", port, err, err2)
	}
	return ln, true, nil
}
