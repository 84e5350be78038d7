//go:build !storecheck_nocontainers

package cluster

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/moby/moby/client"
)

// scratchDockerfile is the whole throwaway image: the binary and nothing
// else, at the path the official image uses.
const scratchDockerfile = "FROM scratch\nCOPY rqlited " + containerBinary + "\nENTRYPOINT [\"" + containerBinary + "\"]\n"

// CheckStatic reports whether the binary at path can run in a FROM-scratch
// image: an ELF executable with no dynamic loader.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not an ELF executable: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; a FROM scratch image needs a static build (CGO_ENABLED=1 go build -ldflags '-extldflags \"-static\"' ./cmd/rqlited)", path)
		}
	}
	return nil
}

// BuildScratchImage builds an image called tag from the static rqlited at
// bin, with labels, and returns its tag. It only packs a binary the caller
// already has; it does not build rqlited. The caller removes the image.
func BuildScratchImage(ctx context.Context, cli *client.Client, bin, tag string, labels map[string]string) (string, error) {
	if err := CheckStatic(bin); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := buildContext(&buf, bin); err != nil {
		return "", fmt.Errorf("build context for %s: %w", tag, err)
	}
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{
		Tags: []string{tag}, Labels: labels, Remove: true, ForceRemove: true, Dockerfile: "Dockerfile",
	})
	if err != nil {
		return "", fmt.Errorf("build image %s: %w", tag, err)
	}
	defer res.Body.Close()
	if err := buildErrors(res.Body); err != nil {
		return "", fmt.Errorf("build image %s: %w", tag, err)
	}
	return tag, nil
}

// buildContext writes a tar of the Dockerfile and the binary.
func buildContext(w io.Writer, bin string) error {
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(scratchDockerfile))}); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, scratchDockerfile); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: "rqlited", Mode: 0o755, Size: fi.Size()}); err != nil {
		return err
	}
	if _, err := io.Copy(tw, f); err != nil {
		return err
	}
	return tw.Close()
}

// buildErrors reads the build's JSON message stream to its end and returns
// the first error it reports.
func buildErrors(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		var m struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Error != "" {
			return fmt.Errorf("%s", m.Error)
		}
	}
	return sc.Err()
}
