// Package logdir carries, on a context, the folder where the servers a
// backend starts for itself (rqlite+process:'s rqlited, libsql+replica:'s
// sqld) write their logs. A backend opened by URL has no other way to be
// told; backends.WithLogDir is the public way to set it.
package logdir

import "context"

type key struct{}

// With returns ctx carrying dir; "" carries none.
func With(ctx context.Context, dir string) context.Context {
	if dir == "" {
		return ctx
	}
	return context.WithValue(ctx, key{}, dir)
}

// From is the folder ctx carries, "" for none.
func From(ctx context.Context) string {
	dir, _ := ctx.Value(key{}).(string)
	return dir
}
