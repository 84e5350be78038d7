package adapter

import (
	"fmt"
	"log/slog"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxProcesses    = 16
	DefaultTimeout         = 30 * time.Second
	DefaultHelloTimeout    = 30 * time.Second
	DefaultShutdownTimeout = 5 * time.Second
)

// Options tune a Store. Zero fields take their defaults.
type Options struct {
	// MaxProcesses caps the pool: at most this many operations run at once.
	// An adapter may lower it in its hello (max_processes).
	MaxProcesses int
	// Timeout bounds each request; an adapter that has not answered by then
	// is killed and the store is broken.
	Timeout time.Duration
	// HelloTimeout bounds starting a process and its hello.
	HelloTimeout time.Duration
	// ShutdownTimeout bounds a process's exit after shutdown; it is killed
	// after that.
	ShutdownTimeout time.Duration
	// Dir is where the store's directory is created; "" means os.TempDir().
	Dir string
	// Logger receives the adapters' stderr, one record per line; nil means
	// slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxProcesses == 0 {
		o.MaxProcesses = DefaultMaxProcesses
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.HelloTimeout == 0 {
		o.HelloTimeout = DefaultHelloTimeout
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxProcesses < 0 || o.Timeout < 0 || o.HelloTimeout < 0 || o.ShutdownTimeout < 0 {
		return o, fmt.Errorf("adapter options must not be negative: %+v", o)
	}
	return o, nil
}
