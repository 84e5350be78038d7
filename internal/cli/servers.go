package cli

import (
	"flag"
	"os"

	"github.com/storecheck/storecheck/backends"
)

// serverFlags say where the servers some backends start come from. They are
// written into the backend URLs (rqlited=, image=, sqld=), so that every
// run's reproduce command carries them.
type serverFlags struct {
	rqlited     string
	rqliteImage string
	sqld        string
}

func (s *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.rqlited, "rqlited", "", "rqlited binary for rqlite+process: and rqlite+container:?image=build backends (default: $RQLITED, then PATH)")
	fs.StringVar(&s.rqliteImage, "rqlite-image", "", "image for rqlite+container: backends (default: the official rqlite/rqlite image at a pinned tag; 'build' packs --rqlited into a FROM-scratch image)")
	fs.StringVar(&s.sqld, "sqld", "", "sqld binary for libsql+replica: backends without primary= (default: $SQLD, then PATH)")
}

func (s *serverFlags) validate() error {
	for name, path := range map[string]string{"rqlited": s.rqlited, "sqld": s.sqld} {
		if path == "" {
			continue
		}
		info, err := os.Stat(path)
		if err != nil {
			return usagef("--%s %s: %v", name, path, unwrapPath(err))
		}
		if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
			return usagef("--%s %s: not an executable file", name, path)
		}
	}
	return nil
}

// apply adds the flags to the backend URLs they concern, unless a URL already
// names its own.
func (s *serverFlags) apply(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = backends.WithServers(u, backends.Servers{RQLited: s.rqlited, RQLiteImage: s.rqliteImage, SQLD: s.sqld})
	}
	return out
}
