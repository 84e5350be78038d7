//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package linearizability

import "os"

// mapFile maps nothing here: LoadFile reads the file.
func mapFile(*os.File) ([]byte, func(), bool) { return nil, nil, false }
