package backends

import (
	"net/url"
	"strings"

	"github.com/storecheck/storecheck/backends/adapter"
	"github.com/storecheck/storecheck/backends/libsql"
	"github.com/storecheck/storecheck/backends/rqlite/managed"
)

// Servers say where the servers some backends start come from, as the
// command line's --rqlited, --rqlite-image and --sqld give them.
type Servers struct {
	RQLited, RQLiteImage, SQLD string
}

// WithServers writes the servers into rawURL's query (rqlited=, image=,
// sqld=), where its scheme uses them and the URL names none of its own, so
// that every run's reproduce command carries them.
func WithServers(rawURL string, s Servers) string {
	scheme, _, _ := strings.Cut(rawURL, ":")
	switch scheme {
	case managed.ProcessScheme:
		rawURL = withParam(rawURL, "rqlited", s.RQLited)
	case managed.ContainerScheme:
		rawURL = withParam(rawURL, "rqlited", s.RQLited)
		rawURL = withParam(rawURL, "image", s.RQLiteImage)
	case libsql.ReplicaScheme:
		rawURL = withParam(rawURL, "sqld", s.SQLD)
	}
	return rawURL
}

// withParam appends key=value to u's query unless value is empty or u has
// the key already.
func withParam(u, key, value string) string {
	if value == "" {
		return u
	}
	_, query, has := strings.Cut(u, "?")
	if has {
		if q, err := url.ParseQuery(query); err == nil && q.Has(key) {
			return u
		}
		return u + "&" + key + "=" + queryValue.Replace(value)
	}
	return u + "?" + key + "=" + queryValue.Replace(value)
}

// queryValue escapes what would end or change a query value, and leaves a
// path readable.
var queryValue = strings.NewReplacer("%", "%25", "&", "%26", "#", "%23", " ", "%20", "+", "%2B", "=", "%3D")

// AdapterURL is the backend URL of a store behind the adapter protocol,
// started with command (the --adapter flag).
func AdapterURL(command string) string { return adapter.Scheme + ":" + command }
