package reports

import "strings"

// ShellQuote is s as one word of a POSIX shell command line: as it is when
// it holds only characters no shell treats specially, else in single
// quotes. A reproduce line quotes its backend URL with it, so that a '?',
// '&' or '{' of the URL reaches storecheck as written (zsh refuses an
// unmatched '?' glob; bash runs a command at '&').
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == ':' || r == '.' || r == '-' || r == '_' || r == '+' || r == ',' || r == '=' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
