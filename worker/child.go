package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
)

// A Role is what a worker process runs. It reads its configuration with
// Child.Config, reports with Child.Send and reads the parent's lines with
// Child.Lines. Its error ends the process with status 1 (after an "error"
// message, when the parent still listens).
type Role func(ctx context.Context, c *Child) error

// Roles are the roles a binary can play, by name.
type Roles map[string]Role

// Main runs this process's role and exits when it was started as a
// worker; otherwise it returns at once. Call it first thing in main, and
// in the TestMain of a test binary whose tests start workers:
//
//	func TestMain(m *testing.M) {
//		worker.Main(roles)
//		os.Exit(m.Run())
//	}
func Main(roles Roles) {
	args, ok := Args()
	if !ok {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, roles, args[1:], os.Stdin, os.Stderr)
	stop()
	os.Exit(code)
}

// Args returns this process's arguments from Arg on, and true, when it was
// started as a worker.
func Args() ([]string, bool) {
	if os.Getenv(env) != "1" {
		return nil, false
	}
	i := slices.Index(os.Args, Arg)
	if i < 0 {
		return nil, false
	}
	return os.Args[i:], true
}

// eventsFD is the file descriptor of the pipe to the parent in a worker:
// the first of exec.Cmd.ExtraFiles.
const eventsFD = 3

// Run plays the role args names, reading the configuration and the
// parent's lines from stdin and writing messages to file descriptor 3,
// and returns the exit code; stderr gets a line when it cannot report.
func Run(ctx context.Context, roles Roles, args []string, stdin io.Reader, stderr io.Writer) int {
	usage := fmt.Sprintf("usage: storecheck %s ROLE (started by scenarios that run processes of their own, not by hand)", Arg)
	if len(args) != 1 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	role, ok := roles[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "storecheck %s: this binary has no worker role %q\n%s\n", Arg, args[0], usage)
		return 2
	}
	out := os.NewFile(eventsFD, "worker-events")
	if info, err := out.Stat(); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		fmt.Fprintf(stderr, "storecheck %s: file descriptor %d is not a pipe to a parent\n%s\n", Arg, eventsFD, usage)
		return 2
	}
	defer out.Close()
	c := &Child{w: out, in: bufio.NewScanner(stdin)}
	c.in.Buffer(make([]byte, 64<<10), 16<<20)
	if !c.in.Scan() {
		fmt.Fprintf(stderr, "storecheck %s %s: no configuration on stdin\n", Arg, args[0])
		return 2
	}
	c.config = slices.Clone(c.in.Bytes())
	if err := role(ctx, c); err != nil {
		if !errors.Is(err, ErrParentGone) {
			_ = c.Send(struct {
				Type  string `json:"type"`
				Error string `json:"error"`
			}{"error", err.Error()})
			fmt.Fprintf(stderr, "storecheck %s %s: %v\n", Arg, args[0], err)
		}
		return 1
	}
	return 0
}

// ErrParentGone: the pipe to the parent is closed; nobody is listening.
var ErrParentGone = errors.New("the parent stopped listening")

// Child is a worker's side of the protocol.
type Child struct {
	config []byte
	mu     sync.Mutex
	w      io.Writer
	in     *bufio.Scanner
}

// Config decodes the configuration the parent sent into v.
func (c *Child) Config(v any) error {
	if err := json.Unmarshal(c.config, v); err != nil {
		return fmt.Errorf("bad worker configuration: %w", err)
	}
	return nil
}

// Send writes v, which must encode to a JSON object with a "type", as one
// line with one write(2).
func (c *Child) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode a worker message: %w", err)
	}
	b = append(b, '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("%w: %v", ErrParentGone, err)
	}
	return nil
}

// SendBody writes v, which must encode to a JSON object with a "type",
// as one line that also says the body's length ("body"), then body, all
// with one write(2): a payload the parent takes as bytes, not decoding it
// as JSON (Message.Body), such as a history of thousands of operations in
// the history file's own lines, which its reader decodes many times faster
// than encoding/json decodes them inside a message.
func (c *Child) SendBody(v any, body []byte) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode a worker message: %w", err)
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return fmt.Errorf("encode a worker message: %.40s is not a JSON object", b)
	}
	if len(body) > maxBody {
		return fmt.Errorf("a worker message's body of %d bytes is over the %d a parent reads", len(body), maxBody)
	}
	b = append(b[:len(b)-1], `,"body":`...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(append(b, "}\n"...), body...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("%w: %v", ErrParentGone, err)
	}
	return nil
}

// Line waits for the parent's next line; false once stdin is closed.
func (c *Child) Line() (string, bool) {
	if !c.in.Scan() {
		return "", false
	}
	return c.in.Text(), true
}
