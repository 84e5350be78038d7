package adapter

import (
	"fmt"
	"strings"
)

// Split splits a command line into words as a POSIX shell would, without
// running one: blanks separate words; '…' quotes literally; "…" quotes with
// \", \\, \$ and \` as the only escapes; a backslash outside quotes escapes
// the next character. Nothing is expanded: $VAR, ~ and * stay as written.
func Split(line string) ([]string, error) {
	var (
		words   []string
		word    strings.Builder
		inWord  bool
		runes   = []rune(line)
		unclose = func(q string) error { return fmt.Errorf("unterminated %s quote in %q", q, line) }
	)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case r == '\'':
			inWord = true
			end := indexRune(runes, i+1, '\'')
			if end < 0 {
				return nil, unclose("single")
			}
			word.WriteString(string(runes[i+1 : end]))
			i = end
		case r == '"':
			inWord = true
			end, err := doubleQuoted(runes, i+1, &word)
			if err != nil {
				return nil, unclose("double")
			}
			i = end
		case r == '\\':
			inWord = true
			if i+1 >= len(runes) {
				return nil, fmt.Errorf("trailing backslash in %q", line)
			}
			i++
			if runes[i] != '\n' { // backslash-newline joins lines
				word.WriteRune(runes[i])
			}
		default:
			inWord = true
			word.WriteRune(r)
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// doubleQuoted copies a "…" body starting at runes[i] into w and returns the
// index of the closing quote.
func doubleQuoted(runes []rune, i int, w *strings.Builder) (int, error) {
	for ; i < len(runes); i++ {
		switch r := runes[i]; {
		case r == '"':
			return i, nil
		case r == '\\' && i+1 < len(runes) && strings.ContainsRune("\"\\$`", runes[i+1]):
			i++
			w.WriteRune(runes[i])
		case r == '\\' && i+1 < len(runes) && runes[i+1] == '\n':
			i++
		default:
			w.WriteRune(r)
		}
	}
	return -1, fmt.Errorf("unterminated")
}

func indexRune(runes []rune, from int, r rune) int {
	for i := from; i < len(runes); i++ {
		if runes[i] == r {
			return i
		}
	}
	return -1
}
