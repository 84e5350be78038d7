package reports

import "testing"

func TestScrub(t *testing.T) {
	cases := []struct{ text, url, want string }{
		// Only the query is quoted: no scheme for Redact to find.
		{`backend memory: takes nothing after the colon, got "?token=s3cr3t-1"`, "memory:?token=s3cr3t-1",
			`backend memory: takes nothing after the colon, got "?token=REDACTED"`},
		// Quoted bare, and percent-encoded in the URL.
		{`adapter "store s3cr3t/2": start failed`, "exec:store?authToken=s3cr3t%2F2", `adapter "store REDACTED": start failed`},
		// User info, also of a URL in a query value.
		{`dial u:pw-9@h failed`, "libsql+replica:/r.db?primary=http://u:pw-9@h:8080", `dial REDACTED@h failed`},
		// A short secret only where it follows its name.
		{`got "?key=ab", a tab`, "memory:?key=ab", `got "?key=REDACTED", a tab`},
		// Nothing secret: the text as it was.
		{`open "/tmp/x.db": no such file`, "sqlite:/tmp/x.db?synchronous=full", `open "/tmp/x.db": no such file`},
		// No URL given: still Redact's treatment of URL-like tokens.
		{`open postgres://u:pw@h/db failed`, "", `open postgres://REDACTED@h/db failed`},
	}
	for _, c := range cases {
		if got := Scrub(c.text, c.url); got != c.want {
			t.Errorf("Scrub(%q, %q) = %q, want %q", c.text, c.url, got, c.want)
		}
	}
}
