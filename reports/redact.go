package reports

import (
	"net/url"
	"strings"
)

// secretParams are query parameters whose values never reach a log or report.
var secretParams = []string{"token", "auth_token", "authtoken", "password", "secret", "key"}

// Redact returns a backend URL fit for logs and reports: any password in the
// user info (of the URL, or of a URL inside a query value such as
// primary=http://u:p@h) and the value of any secret-looking query parameter
// replaced by "REDACTED". Everything else is kept as written, in its order, so
// that a reproduce command reads like the command the user typed. Tokens
// belong in environment variables, but a user who puts one in a URL must not
// find it in a CI artifact.
func Redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok {
		return raw
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	path = redactUserInfo(path)
	if !hasQuery {
		return scheme + ":" + path
	}
	pairs := strings.Split(query, "&")
	for i, pair := range pairs {
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			key = k
		}
		if isSecret(key) {
			pairs[i] = k + "=REDACTED"
			continue
		}
		if val, err := url.QueryUnescape(v); err == nil && strings.Contains(val, "@") {
			if red := redactUserInfo(val); red != val {
				pairs[i] = k + "=" + url.QueryEscape(red)
			}
		}
	}
	return scheme + ":" + path + "?" + strings.Join(pairs, "&")
}

func isSecret(key string) bool {
	key = strings.ToLower(key)
	for _, s := range secretParams {
		if strings.Contains(key, s) {
			return true
		}
	}
	return false
}

// redactUserInfo hides the user info of "//user:pass@host…" or
// "scheme://user:pass@host…".
func redactUserInfo(s string) string {
	start := strings.Index(s, "//")
	if start < 0 {
		return s
	}
	host := s[start+2:]
	end := strings.IndexAny(host, "/?#")
	if end < 0 {
		end = len(host)
	}
	at := strings.LastIndex(host[:end], "@")
	if at < 0 {
		return s
	}
	return s[:start+2] + "REDACTED@" + host[at+1:]
}
