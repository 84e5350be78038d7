package reports

import (
	"maps"
	"regexp"
	"strings"
)

// urlLike matches a token that may be a URL: a scheme, a colon, and no
// blanks or quotes.
var urlLike = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*:[^\\s\"'<>`]+")

// redactText passes every URL-like token of free text (a reason, a
// reproduce command) that carries user info or a query through Redact.
func redactText(s string) string {
	if !strings.ContainsAny(s, "@?") {
		return s
	}
	return urlLike.ReplaceAllStringFunc(s, func(tok string) string {
		if !strings.ContainsAny(tok, "@?") {
			return tok
		}
		// Punctuation ending a sentence is not part of the URL.
		trimmed := strings.TrimRight(tok, ".,;:)]")
		return Redact(trimmed) + tok[len(trimmed):]
	})
}

// redactRun is a copy of r with every text a report shows redacted again:
// the summary should already hold redacted URLs, but a report must not rely
// on it.
func redactRun(r Run) Run {
	r.Backend = redactText(Redact(r.Backend))
	r.Reason, r.Reproduce, r.Guarantee = redactText(r.Reason), redactText(r.Reproduce), redactText(r.Guarantee)
	steps := make([]string, len(r.MinimalSteps))
	for i, s := range r.MinimalSteps {
		steps[i] = redactText(s)
	}
	r.MinimalSteps = steps
	if r.Options != nil {
		opts := maps.Clone(r.Options)
		for k, v := range opts {
			opts[k] = redactText(v)
		}
		r.Options = opts
	}
	return r
}
