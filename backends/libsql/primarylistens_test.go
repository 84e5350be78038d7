package libsql

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A primary given by URL where nothing listens is named as such, not as
// the replica's "channel closed" through the proxy; one that listens
// passes, whatever it answers.
func TestPrimaryListens(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	err = primaryListens(context.Background(), "http://user:pw@"+closed)
	if err == nil || !strings.Contains(err.Error(), "nothing listens at "+closed) || !strings.Contains(err.Error(), "sqld") {
		t.Errorf("a closed primary: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "pw") {
		t.Errorf("the error shows the URL's password: %v", err)
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if err := primaryListens(context.Background(), srv.URL); err != nil {
		t.Errorf("a listening primary: %v", err)
	}
	if err := primaryListens(context.Background(), "not a url at all"); err != nil {
		t.Errorf("a URL without a host is left to the connection: %v", err)
	}
}
