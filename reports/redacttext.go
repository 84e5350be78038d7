package reports

import (
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
