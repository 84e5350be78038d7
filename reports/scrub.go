package reports

import (
	"slices"
	"strings"
)

// minBareSecret is the shortest secret Scrub replaces wherever it stands;
// a shorter one is replaced only where it follows its parameter's name
// ("token=ab"), so that a secret of a letter or two does not blank out
// every word that holds it.
const minBareSecret = 4

// Scrub returns text, a message that may quote a backend URL or a part of
// one (an error, a reason, a command line), with every secret of rawURLs
// replaced by "REDACTED" — what Redact hides in them: a secret-looking
// query parameter's value, the user info of a URL, also of one inside a
// query value — and every URL-like token left passed through Redact. A
// message that quotes only the query ("got \"?token=…\"") carries no
// scheme for Redact to find, so the secrets are looked for by value.
func Scrub(text string, rawURLs ...string) string {
	for _, raw := range rawURLs {
		for _, s := range secretsOf(raw) {
			if s.param != "" {
				text = strings.ReplaceAll(text, s.param+"="+s.value, s.param+"=REDACTED")
			}
			if len(s.value) >= minBareSecret {
				text = strings.ReplaceAll(text, s.value, "REDACTED")
			}
		}
	}
	return redactText(text)
}

// ScrubRun is r with every text a report or the terminal shows scrubbed
// of rawURLs' secrets (Scrub): the run's own backend URL as given, before
// the runner redacted it. The backend itself is only redacted, never
// scrubbed by value, so the run keeps the name progress knows it by.
func ScrubRun(r Run, rawURLs ...string) Run {
	scrub := func(s string) string { return Scrub(s, rawURLs...) }
	r.Backend = redactText(Redact(r.Backend)) // as given to Redact: its secrets are gone
	r.Reason, r.Reproduce, r.Guarantee = scrub(r.Reason), scrub(r.Reproduce), scrub(r.Guarantee)
	steps := make([]string, len(r.MinimalSteps))
	for i, s := range r.MinimalSteps {
		steps[i] = scrub(s)
	}
	r.MinimalSteps = steps
	if r.Options != nil {
		opts := make(map[string]string, len(r.Options))
		for k, v := range r.Options {
			opts[k] = scrub(v)
		}
		r.Options = opts
	}
	return r
}

// secret is one secret of a URL: its value, as written and unescaped, and
// the name it follows (a query parameter's, or "" for user info).
type secret struct{ param, value string }

// secretsOf lists the secrets Redact hides in raw, longest first (so that
// no shorter one cuts a longer one in two before it is replaced).
func secretsOf(raw string) []secret {
	_, rest, ok := strings.Cut(raw, ":")
	if !ok {
		return nil
	}
	path, query, _ := strings.Cut(rest, "?")
	out := userInfoSecrets(path)
	if query != "" {
		for pair := range strings.SplitSeq(query, "&") {
			k, v, _ := strings.Cut(pair, "=")
			val := unescaped(v)
			switch {
			case v == "":
			case isSecret(unescaped(k)):
				out = append(out, secret{k, v}, secret{k, val})
			case strings.Contains(val, "@"):
				out = append(out, userInfoSecrets(val)...)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b secret) int { return len(b.value) - len(a.value) })
	return out
}

// userInfoSecrets lists the user info of "…//user:pass@host…" and its
// password (redactUserInfo hides both).
func userInfoSecrets(s string) []secret {
	from, to, ok := userInfoSpan(s)
	if !ok || to == from {
		return nil
	}
	info := s[from:to]
	out := []secret{{"", info}}
	if _, pass, ok := strings.Cut(info, ":"); ok && pass != "" {
		out = append(out, secret{"", pass})
	}
	return out
}
