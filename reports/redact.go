package reports

import (
	"net/url"
	"strings"
)

// secretParams are query parameters whose values never reach a log or report.
var secretParams = []string{"token", "auth_token", "authtoken", "password", "secret", "key"}

// Redact returns a backend URL fit for logs and reports: any password in the
// user info and the value of any secret-looking query parameter replaced by
// "REDACTED". Tokens belong in environment variables, but a user who puts one
// in a URL must not find it in a CI artifact.
func Redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok {
		return raw
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	if at := strings.LastIndex(path, "@"); at >= 0 && strings.HasPrefix(path, "//") {
		path = "//REDACTED@" + path[at+1:]
	}
	if !hasQuery {
		return scheme + ":" + path
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return scheme + ":" + path + "?REDACTED"
	}
	for k := range values {
		for _, s := range secretParams {
			if strings.Contains(strings.ToLower(k), s) {
				values[k] = []string{"REDACTED"}
			}
		}
	}
	return scheme + ":" + path + "?" + values.Encode()
}
