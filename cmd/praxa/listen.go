package main

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// This file binds the listeners of the commands (serve's, the metrics of
// praxa mcp, the profiling listener, the conformance suite's issuer), so
// that an address that cannot be bound says which setting named it and
// what to give instead, not only "bind: address already in use".

// listenSetting is where a listener's address comes from.
type listenSetting struct {
	// name is the flag (--addr) or environment variable (PRAXA_PPROF_ADDR)
	// that sets the address.
	name string
	// from says where the address was read when not from name itself
	// (server.addr of praxec.yaml, the default); "" when name gave it.
	from string
}

// with is the setting given the value addr, as a person types it.
func (s listenSetting) with(addr string) string {
	if strings.HasPrefix(s.name, "-") {
		return s.name + " " + addr
	}
	return s.name + "=" + addr
}

// listen binds addr for the listener s sets.
func listen(addr string, s listenSetting) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, listenError(addr, s, err)
	}
	return ln, nil
}

// listenError explains why addr, of setting s, could not be bound: an
// address in use names the setting and an address free now on the same
// host; a port that needs privileges says so. It wraps err.
func listenError(addr string, s listenSetting, err error) error {
	where := s.name
	if s.from != "" {
		where = s.from
	}
	// "listen tcp ADDR: bind: ..." says the address again.
	if op := (*net.OpError)(nil); errors.As(err, &op) {
		err = op.Err
	}
	var hint string
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		hint = "the address is in use: another process listens on it (another praxa?); stop it, or give another address with " + s.name
		if free := freeAddr(addr); free != "" {
			hint += ", e.g. " + s.with(free) + " (free now)"
		}
	case errors.Is(err, syscall.EACCES):
		hint = "binding this port needs privileges (ports below 1024 do): give a port above 1023 with " + s.name
		if free := freeAddr(addr); free != "" {
			hint += ", e.g. " + s.with(free)
		}
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		hint = "no interface of this machine has that address: give one it has with " + s.name + ", e.g. " + s.with("127.0.0.1:0") + " (any free loopback port)"
	default:
		return fmt.Errorf("listen on %s (%s): %w", addr, where, err)
	}
	return fmt.Errorf("listen on %s (%s): %w\n%s", addr, where, err, hint)
}

// freeAddr is an address on addr's host whose port is free now (the
// system's choice), or "" when none can be bound there.
func freeAddr(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return ""
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return net.JoinHostPort(host, port)
}
