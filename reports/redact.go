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
		if isSecret(unescaped(k)) {
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

// unescaped is s query-unescaped, or s as written when it does not
// unescape.
func unescaped(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// redactUserInfo hides the user info of "//user:pass@host…" or
// "scheme://user:pass@host…".
func redactUserInfo(s string) string {
	from, to, ok := userInfoSpan(s)
	if !ok {
		return s
	}
	return s[:from] + "REDACTED" + s[to:]
}

// userInfoSpan finds the user info of "//user:pass@host…" in s: it is
// s[from:to], the "@" at to; ok is false when there is none.
func userInfoSpan(s string) (from, to int, ok bool) {
	start := strings.Index(s, "//")
	if start < 0 {
		return 0, 0, false
	}
	host := s[start+2:]
	if end := strings.IndexAny(host, "/?#"); end >= 0 {
		host = host[:end]
	}
	at := strings.LastIndex(host, "@")
	if at < 0 {
		return 0, 0, false
	}
	return start + 2, start + 2 + at, true
}
