package worker

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// echo answers its configuration, then every line the parent tells it,
// until stdin ends; told "die" it waits to be killed.
func echo(ctx context.Context, c *Child) error {
	var cfg struct{ Greeting string }
	if err := c.Config(&cfg); err != nil {
		return err
	}
	if err := c.Send(map[string]string{"type": "hello", "text": cfg.Greeting}); err != nil {
		return err
	}
	for {
		line, ok := c.Line()
		if !ok {
			return nil
		}
		if line == "fail" {
			return errors.New("told to fail")
		}
		if n, ok := strings.CutPrefix(line, "body "); ok {
			if err := c.SendBody(map[string]string{"type": "body"}, []byte(strings.Repeat(n+"\n", 3))); err != nil {
				return err
			}
			continue
		}
		if err := c.Send(map[string]string{"type": "echo", "text": line}); err != nil {
			return err
		}
		if line == "die" {
			<-ctx.Done()
			return nil
		}
	}
}

func TestMain(m *testing.M) {
	Main(Roles{"echo": echo})
	os.Exit(m.Run())
}

type text struct{ Text string }

func next(t *testing.T, p *Process) Message {
	t.Helper()
	select {
	case m, ok := <-p.Events():
		if !ok {
			t.Fatalf("the worker's pipe ended: %s", p.Status())
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatalf("no message: %s", p.Status())
	}
	return Message{}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestProtocol(t *testing.T) {
	c, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(context.Background(), c, "echo", map[string]string{"Greeting": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var got text
	if m := next(t, p); m.Type != "hello" || m.Decode(&got) != nil || got.Text != "hi" {
		t.Fatalf("first message %s %s", m.Type, m.Raw)
	}
	if err := p.Tell("one"); err != nil {
		t.Fatal(err)
	}
	if m := next(t, p); m.Type != "echo" || m.Decode(&got) != nil || got.Text != "one" {
		t.Fatalf("echo %s %s", m.Type, m.Raw)
	}
	if err := p.Tell("die"); err != nil {
		t.Fatal(err)
	}
	next(t, p)
	if err := p.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if rest := p.Drain(); len(rest) != 0 {
		t.Errorf("messages after the kill: %v", rest)
	}
	if alive(p.Pid()) {
		t.Errorf("worker %d survived SIGKILL and Drain", p.Pid())
	}
	if !strings.Contains(p.Status(), "killed") {
		t.Errorf("status %q does not say it was killed", p.Status())
	}
}

// A role's error reaches the parent as an "error" message and exit 1.
func TestRoleError(t *testing.T) {
	c, _ := Self()
	p, err := Start(context.Background(), c, "echo", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	next(t, p)
	_ = p.Tell("fail")
	m := next(t, p)
	var e struct{ Error string }
	if m.Type != "error" || m.Decode(&e) != nil || e.Error != "told to fail" {
		t.Fatalf("got %s %s", m.Type, m.Raw)
	}
	p.Drain()
	if !strings.Contains(p.Status(), "exit status 1") {
		t.Errorf("status %q", p.Status())
	}
}

// A context that ends kills the worker's whole group.
func TestContextKills(t *testing.T) {
	c, _ := Self()
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, c, "echo", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	next(t, p)
	cancel()
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatalf("worker %d outlived its context", p.Pid())
	}
}

// A program that is not a worker, or a role this binary lacks, says so.
func TestNotAWorker(t *testing.T) {
	path, err := exec.LookPath("true")
	if err != nil {
		t.Skip(err)
	}
	p, err := Start(context.Background(), Command{Path: path}, "echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Drain()
	if !strings.Contains(p.Status(), "worker.Main") {
		t.Errorf("status %q does not say how to make a worker", p.Status())
	}
	c, _ := Self()
	p, err = Start(context.Background(), c, "no-such-role", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Drain()
	if s := p.Status(); !strings.Contains(s, "no worker role") || !strings.Contains(s, "exit status 2") {
		t.Errorf("status %q", s)
	}
}

// With adds to the environment the worker sees.
func TestWithEnv(t *testing.T) {
	c := Command{Path: "x"}.With("A=1")
	if len(c.Env) != 1 || c.Env[0] != "A=1" {
		t.Errorf("env %v", c.Env)
	}
}

// A message's body reaches the parent as bytes, and the lines after it
// are read as lines again.
func TestBody(t *testing.T) {
	c, _ := Self()
	p, err := Start(context.Background(), c, "echo", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	next(t, p)
	big := strings.Repeat("x", 200<<10) // beyond the reader's buffer and a pipe's
	for _, line := range []string{"body {\"a\":1}", "body " + big, "after"} {
		if err := p.Tell(line); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"{\"a\":1}", big} {
		m := next(t, p)
		if m.Type != "body" || string(m.Body) != strings.Repeat(want+"\n", 3) {
			t.Fatalf("got a %s message with a body of %d bytes, want %d", m.Type, len(m.Body), 3*(len(want)+1))
		}
	}
	var got text
	if m := next(t, p); m.Type != "echo" || m.Decode(&got) != nil || got.Text != "after" || m.Body != nil {
		t.Fatalf("after the bodies: %s %s (body %q)", m.Type, m.Raw, m.Body)
	}
}

// A body cut short (the worker died writing it) is dropped as a cut last
// line is; a length that cannot be is a malformed line, and ends the
// reading, since no line can be found after it.
func TestBodyCutOrMalformed(t *testing.T) {
	for _, c := range []struct {
		name, stream string
		want         []string // the types delivered
		readErr      string
	}{
		{"whole", "{\"type\":\"a\",\"body\":3}\nxyz{\"type\":\"b\"}\n", []string{"a", "b"}, ""},
		{"cut", "{\"type\":\"a\"}\n{\"type\":\"h\",\"body\":10}\nxyz", []string{"a"}, ""},
		{"negative", "{\"type\":\"h\",\"body\":-1}\n{\"type\":\"b\"}\n", nil, "a body of -1 bytes"},
		{"huge", "{\"type\":\"h\",\"body\":99999999999}\n{\"type\":\"b\"}\n", nil, "a body of 99999999999 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() { _, _ = w.WriteString(c.stream); w.Close() }()
			p := &Process{events: make(chan Message, 8)}
			p.read(r)
			var types []string
			for m := range p.events {
				types = append(types, m.Type)
			}
			if strings.Join(types, ",") != strings.Join(c.want, ",") {
				t.Errorf("delivered %v, want %v", types, c.want)
			}
			if c.readErr == "" && p.readErr != nil || c.readErr != "" && (p.readErr == nil || !strings.Contains(p.readErr.Error(), c.readErr)) {
				t.Errorf("read error %v, want one saying %q", p.readErr, c.readErr)
			}
		})
	}
}
