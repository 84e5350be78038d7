package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGetForwardStats reads the counters of both rqlite generations from
// /debug/vars as each lays them out, and says how many writes were sent
// again: rqlite 10's new-connection attempts less the reads'; on rqlite 8,
// which has no such counter, every failed attempt of a write not given up
// on.
func TestGetForwardStats(t *testing.T) {
	for _, tc := range []struct {
		name, vars string
		want       ForwardStats
		resent     int64
	}{
		{"rqlite 10", `{"cmdline":["rqlited"],"memstats":{"Alloc":1,"BySize":[{"Size":0}]},
			"cluster":{"num_client_execute_retries":3,"num_client_force_new_conn":3},
			"proxy":{"remote_executions":5,"remote_executions_failed":1}}`,
			ForwardStats{Forwarded: 5, GivenUp: 1, FailedAttempts: 3, NewConnections: 3}, 3},
		{"rqlite 10, nothing sent again", `{"cluster":{"num_client_execute_retries":2,"num_client_force_new_conn":0},"proxy":{"remote_executions":9,"remote_executions_failed":2}}`,
			ForwardStats{Forwarded: 9, GivenUp: 2, FailedAttempts: 2, NewConnections: 0}, 0},
		{"rqlite 10, only reads sent again", `{"cluster":{"num_client_execute_retries":0,"num_client_query_retries":4,"num_client_request_retries":1,"num_client_force_new_conn":5},"proxy":{"remote_executions":9}}`,
			ForwardStats{Forwarded: 9, ReadFailedAttempts: 5, NewConnections: 5}, 0},
		{"rqlite 10, writes and reads sent again", `{"cluster":{"num_client_execute_retries":3,"num_client_query_retries":4,"num_client_force_new_conn":7},"proxy":{"remote_executions":9}}`,
			ForwardStats{Forwarded: 9, FailedAttempts: 3, ReadFailedAttempts: 4, NewConnections: 7}, 3},
		// rqlite 10.0.0 (leader-pause seed 1): 97 writes and 199 reads sent
		// once more, each adding 2 to its retries counter until 10.2.7.
		{"rqlite 10.0-10.2.6, two retries counted per request sent again", `{"cluster":{"num_client_execute_retries":194,"num_client_query_retries":398,"num_client_force_new_conn":296},"proxy":{"remote_executions":8110,"remote_executions_failed":71}}`,
			ForwardStats{Forwarded: 8110, GivenUp: 71, FailedAttempts: 194, ReadFailedAttempts: 398, NewConnections: 296}, 97},
		// Reads' retries that are not a whole number of reads (the
		// counters read between a read's two counts) are a read, not a
		// write sent again.
		{"rqlite 10.0-10.2.6, a read counted once of two", `{"cluster":{"num_client_execute_retries":0,"num_client_query_retries":5,"num_client_force_new_conn":3},"proxy":{"remote_executions":9}}`,
			ForwardStats{Forwarded: 9, ReadFailedAttempts: 5, NewConnections: 3}, 0},
		{"rqlite 8", `{"cluster":{"num_client_execute_retries":10},"http":{"remote_executions":7,"remote_executions_failed":1}}`,
			ForwardStats{Forwarded: 7, GivenUp: 1, FailedAttempts: 10, NewConnections: -1}, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/debug/vars" {
					http.NotFound(w, r)
					return
				}
				_, _ = w.Write([]byte(tc.vars))
			}))
			defer srv.Close()
			st, err := GetForwardStats(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			if st != tc.want || st.Resent() != tc.resent {
				t.Errorf("got %+v (resent %d), want %+v (resent %d)", st, st.Resent(), tc.want, tc.resent)
			}
		})
	}
}
