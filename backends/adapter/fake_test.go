package adapter

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/storecheck/storecheck/backends/adapter/serve"
	"github.com/storecheck/storecheck/backends/adapter/wire"
	"github.com/storecheck/storecheck/backends/sqlite"
	"github.com/storecheck/storecheck/model"
)

// The test binary doubles as the adapters the tests run: started with
// selfArg and a mode, TestMain serves that mode on stdin and stdout instead
// of running tests.
const selfArg = "storecheck-test-adapter"

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == selfArg && os.Args[2] == "sleep" {
		time.Sleep(time.Hour) // a helper an adapter left running
		return
	}
	if len(os.Args) == 3 && os.Args[1] == selfArg {
		os.Exit(runSelf(os.Args[2]))
	}
	os.Exit(m.Run())
}

// self is the command line of this test binary as an adapter in mode.
func self(mode string) []string { return []string{os.Args[0], selfArg, mode} }

// runSelf is one adapter: "go-sqlite" is storecheck's SQLite backend behind
// serve, as adapters/go runs it; every other mode is a fake that breaks the
// protocol in one way, after a good hello unless the mode is about hello.
func runSelf(mode string) int {
	if mode == "go-sqlite" {
		open := func(ctx context.Context, h wire.Hello) (model.Store, error) {
			return sqlite.Open(ctx, filepath.Join(h.Store.Dir, "store.db"), model.Config{TraceMax: h.TraceMax})
		}
		if err := serve.Serve(context.Background(), os.Stdin, os.Stdout, open, serve.Options{Name: "go-sqlite"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	say := func(line string) {
		out.WriteString(line + "\n")
		out.Flush()
	}
	for n := 0; in.Scan(); n++ {
		req, err := wire.DecodeRequest(in.Bytes())
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake adapter: bad request:", err)
			return 2
		}
		if n == 0 {
			if !fakeHello(mode, req, say) {
				return 2
			}
			continue
		}
		if req.Op == wire.OpShutdown {
			say(fmt.Sprintf(`{"id":%d,"ok":true,"result":null}`, req.ID))
			if mode == "linger-after-shutdown" {
				fmt.Fprintln(os.Stderr, "fake adapter: not exiting")
				time.Sleep(time.Hour)
			}
			return 0
		}
		if !fakeAnswer(mode, req, say) {
			return 3
		}
	}
	return 0
}

// goodHello is a hello answer listing every required operation.
func goodHello(id uint64) string {
	line, _ := wire.OKResponse(id, wire.HelloResult{Protocol: wire.Version, Name: "fake", Ops: wire.RequiredOps})
	return string(line[:len(line)-1])
}

// fakeHello answers hello as mode says; false ends the adapter.
func fakeHello(mode string, req wire.Request, say func(string)) bool {
	id := req.ID
	var h wire.Hello
	_ = wire.Decode(req.Args, &h)
	switch {
	case mode == "later-hello-differs" && h.Process > 0:
		say(fmt.Sprintf(`{"id":%d,"ok":true,"result":{"protocol":1,"name":"fake","ops":%s,"max_processes":0}}`, id, opsJSON(append(slices.Clone(wire.RequiredOps), wire.OpDump))))
		return true
	}
	switch mode {
	case "exit-at-hello":
		fmt.Fprintln(os.Stderr, "fake adapter: cannot open the database: no such file")
		return false
	case "silent-hello":
		time.Sleep(time.Hour)
	case "garbage-hello":
		say("Hello, harness!")
	case "old-protocol":
		say(fmt.Sprintf(`{"id":%d,"ok":false,"error":{"kind":"not_applied","message":"protocol 1 not supported"}}`, id))
	case "missing-ops":
		say(fmt.Sprintf(`{"id":%d,"ok":true,"result":{"protocol":1,"name":"fake","ops":["load","save"],"max_processes":0}}`, id))
	default:
		say(goodHello(id))
	}
	return true
}

// fakeAnswer answers one request after hello as mode says; false ends the
// adapter.
func fakeAnswer(mode string, req wire.Request, say func(string)) bool {
	switch mode {
	case "bad-json":
		say(`{"id": ` + fmt.Sprint(req.ID) + `, "ok": tru`)
	case "wrong-id":
		say(fmt.Sprintf(`{"id":%d,"ok":true,"result":null}`, req.ID+1))
	case "no-result":
		say(fmt.Sprintf(`{"id":%d,"ok":true}`, req.ID))
	case "unknown-kind":
		say(fmt.Sprintf(`{"id":%d,"ok":false,"error":{"kind":"oops","message":"what"}}`, req.ID))
	case "bad-result":
		say(fmt.Sprintf(`{"id":%d,"ok":true,"result":{"version":"seven"}}`, req.ID))
	case "not-applied":
		say(fmt.Sprintf(`{"id":%d,"ok":false,"error":{"kind":"not_applied","message":"disk on fire"}}`, req.ID))
	case "unknown-outcome":
		say(fmt.Sprintf(`{"id":%d,"ok":false,"error":{"kind":"unknown","message":"connection lost during COMMIT"}}`, req.ID))
	case "exit-mid":
		fmt.Fprintln(os.Stderr, "fake adapter: Traceback: boom")
		return false
	case "hang":
		fmt.Fprintln(os.Stderr, "fake adapter: waiting for a lock")
		time.Sleep(time.Hour)
	case "exit-mid-bg":
		// A helper that inherits stdout and stderr, as `helper &` in a
		// wrapper script does: stdout does not end with the exit.
		helper := exec.Command(os.Args[0], selfArg, "sleep")
		helper.Stdout, helper.Stderr = os.Stdout, os.Stderr
		if err := helper.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake adapter: start the helper:", err)
		}
		fmt.Fprintln(os.Stderr, "fake adapter: Traceback: boom")
		os.Exit(11)
	case "later-hello-differs":
		time.Sleep(100 * time.Millisecond)
		say(fmt.Sprintf(`{"id":%d,"ok":true,"result":null}`, req.ID))
	case "extra-line":
		say(fmt.Sprintf(`{"id":%d,"ok":true,"result":{"version":1}}`, req.ID))
		say(`{"id":424242,"ok":true,"result":null}`)
	default:
		say(fmt.Sprintf(`{"id":%d,"ok":false,"error":{"kind":"not_applied","message":"unknown mode %s"}}`, req.ID, mode))
	}
	return true
}

// opsJSON is ops as a JSON array.
func opsJSON(ops []string) string {
	b, _ := json.Marshal(ops)
	return string(b)
}
