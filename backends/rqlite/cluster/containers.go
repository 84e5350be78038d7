//go:build !storecheck_nocontainers

package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	mnetwork "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/network"

	"github.com/storecheck/storecheck/backends/internal/ports"
)

// Paths inside the container.
const (
	containerBinary = "/bin/rqlited"      // where the official image has it, and ours too
	containerData   = "/rqlite/file/data" // writable by the official image's user
)

// Containers is a cluster of rqlite containers on a Docker network the run
// creates. Each node's HTTP port is published on a fixed loopback port,
// so that its address survives a restart.
type Containers struct {
	cfg   ContainerConfig
	run   string
	image string
	built bool // image was built by this run and is removed on Close
	cli   *testcontainers.DockerClient
	net   *testcontainers.DockerNetwork
	mu    sync.Mutex
	ctrs  []*ctr
}

// ctr is one node's container.
type ctr struct {
	node     Node
	name     string
	c        testcontainers.Container
	hostPort int
}

var _ Cluster = (*Containers)(nil)

// DockerAvailable says why no container cluster can start here, or nil.
func DockerAvailable(ctx context.Context) error {
	setRyukDisabled()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("no Docker engine: %w", err)
	}
	return cli.Close()
}

// setRyukDisabled turns testcontainers' reaper off unless the user chose
// otherwise: its image cannot be pulled without a registry, and every
// cluster here removes what it starts itself.
func setRyukDisabled() {
	if _, set := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !set {
		_ = os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
}

// init makes that choice before anything in the process can use
// testcontainers: it reads its settings from the environment once, on first
// use, for the whole process, so setting it later (when a cluster starts)
// is too late if another package touched testcontainers first.
func init() { setRyukDisabled() }

// StartContainers starts cfg.Nodes containers on a new network and waits for
// a leader. On error everything started is removed again.
func StartContainers(ctx context.Context, cfg ContainerConfig) (_ *Containers, err error) {
	if cfg.Config, err = cfg.Config.normalize(); err != nil {
		return nil, err
	}
	setRyukDisabled()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("no Docker engine: %w", err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	c := &Containers{cfg: cfg, run: hex.EncodeToString(b), cli: cli, image: cfg.Image}
	defer func() {
		if err != nil {
			if cerr := c.Close(); cerr != nil {
				err = fmt.Errorf("%w (and cleaning up: %v)", err, cerr)
			}
		}
	}()
	if c.image == "" {
		c.image = DefaultImage
	}
	if c.image == BuildImage {
		bin, err := FindRqlited(cfg.Rqlited)
		if err != nil {
			return nil, fmt.Errorf("build a scratch image: %w", err)
		}
		if c.image, err = BuildScratchImage(ctx, cli.Client, bin, "storecheck-rqlite:"+c.run, map[string]string{Label: c.run}); err != nil {
			return nil, err
		}
		c.built = true
	} else if err := c.haveImage(ctx); err != nil {
		return nil, err
	}
	if c.net, err = network.New(ctx, network.WithLabels(map[string]string{Label: c.run})); err != nil {
		return nil, fmt.Errorf("create a Docker network: %w", err)
	}
	free, err := ports.Free(cfg.Nodes)
	if err != nil {
		return nil, err
	}
	ids := nodeIDs(cfg.Nodes)
	var join []string
	for _, id := range ids {
		join = append(join, c.name(id)+":4002")
	}
	for i, id := range ids {
		if err := c.startNode(ctx, id, free[i], join); err != nil {
			return nil, err
		}
	}
	if _, err := WaitLeader(ctx, c, "", cfg.ReadyTimeout); err != nil {
		return nil, fmt.Errorf("%w%s", err, c.logHint(ctx))
	}
	if err := WaitReady(ctx, c, cfg.ReadyTimeout); err != nil {
		return nil, fmt.Errorf("%w%s", err, c.logHint(ctx))
	}
	return c, nil
}

// haveImage makes sure the image is on this machine. Like the project's
// other servers, storecheck does not pull: a run never reaches out to a
// registry; where one is reachable, docker pull the image first.
func (c *Containers) haveImage(ctx context.Context) error {
	if _, err := c.cli.ImageInspect(ctx, c.image); err != nil {
		return fmt.Errorf("image %s is not on this machine (storecheck does not pull: docker pull it where a registry is reachable, or use image=%s to pack a local static rqlited): %w",
			c.image, BuildImage, oneLine(err))
	}
	return nil
}

func oneLine(err error) error {
	if err == nil || !strings.Contains(err.Error(), "\n") {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
}

func (c *Containers) name(id string) string { return "storecheck-" + c.run + "-" + id }

// startNode creates and starts one node's container.
func (c *Containers) startNode(ctx context.Context, id string, hostPort int, join []string) error {
	name := c.name(id)
	args := []string{"-node-id", id,
		"-http-addr", "0.0.0.0:4001", "-http-adv-addr", name + ":4001",
		"-raft-addr", "0.0.0.0:4002", "-raft-adv-addr", name + ":4002"}
	if c.cfg.Nodes > 1 {
		args = append(args, "-bootstrap-expect", strconv.Itoa(c.cfg.Nodes), "-join", strings.Join(join, ","))
	}
	args = append(args, c.cfg.ServerFlags...)
	args = append(args, containerData)
	port := mnetwork.MustParsePort("4001/tcp")
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:          c.image,
			Name:           name,
			Entrypoint:     []string{containerBinary},
			Cmd:            args,
			Labels:         map[string]string{Label: c.run},
			ExposedPorts:   []string{"4001/tcp"},
			Networks:       []string{c.net.Name},
			NetworkAliases: map[string][]string{c.net.Name: {name}},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = mnetwork.PortMap{port: {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(hostPort)}}}
			},
		},
		Started: true,
		// The harness reports what matters; testcontainers' chatter would
		// interleave with its output.
		Logger: tclog.NewNoopLogger(),
	}
	k, err := testcontainers.GenericContainer(ctx, req)
	if k != nil {
		// Recorded even when the start failed: a created container must go.
		c.mu.Lock()
		c.ctrs = append(c.ctrs, &ctr{
			node: Node{ID: id, HTTPAddr: "127.0.0.1:" + strconv.Itoa(hostPort), RaftAddr: name + ":4002"},
			name: name, c: k, hostPort: hostPort,
		})
		c.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("start container %s from %s: %w", name, c.image, oneLine(err))
	}
	return nil
}

// logHint points at the servers' own account of a failed start.
func (c *Containers) logHint(ctx context.Context) string {
	var tail []string
	for _, k := range c.ctrs {
		var b strings.Builder
		if err := c.writeLogs(ctx, k, &b); err == nil {
			lines := strings.Split(strings.TrimSpace(b.String()), "\n")
			tail = append(tail, k.node.ID+": "+lines[len(lines)-1])
		}
	}
	if len(tail) == 0 {
		return ""
	}
	return " (last server log lines: " + strings.Join(tail, " | ") + ")"
}

func (c *Containers) get(id string) (*ctr, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.ctrs {
		if k.node.ID == id {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownNode, id)
}

// Kind implements Cluster.
func (c *Containers) Kind() string { return "container" }

// Nodes implements Cluster.
func (c *Containers) Nodes() []Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Node, len(c.ctrs))
	for i, k := range c.ctrs {
		out[i] = k.node
	}
	return out
}

// Run is the id in the Label of everything this cluster created.
func (c *Containers) Run() string { return c.run }

// Kill implements Cluster: docker kill (SIGKILL).
func (c *Containers) Kill(ctx context.Context, id string) error {
	k, err := c.get(id)
	if err != nil {
		return err
	}
	if _, err := c.cli.ContainerKill(ctx, k.c.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("kill %s: %w", id, err)
	}
	return nil
}

// Stop implements Cluster: docker stop, SIGKILL after 15s.
func (c *Containers) Stop(ctx context.Context, id string) error {
	k, err := c.get(id)
	if err != nil {
		return err
	}
	grace := 15 * time.Second
	if err := k.c.Stop(ctx, &grace); err != nil {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	return nil
}

// Start implements Cluster: the same container, its data kept.
func (c *Containers) Start(ctx context.Context, id string) error {
	k, err := c.get(id)
	if err != nil {
		return err
	}
	if _, err := c.cli.ContainerStart(ctx, k.c.GetContainerID(), client.ContainerStartOptions{}); err != nil {
		return fmt.Errorf("start %s: %w", id, err)
	}
	return nil
}

// Pause implements Cluster: docker pause.
func (c *Containers) Pause(ctx context.Context, id string) error {
	k, err := c.get(id)
	if err != nil {
		return err
	}
	if _, err := c.cli.ContainerPause(ctx, k.c.GetContainerID(), client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("pause %s: %w", id, err)
	}
	return nil
}

// Resume implements Cluster: docker unpause.
func (c *Containers) Resume(ctx context.Context, id string) error {
	k, err := c.get(id)
	if err != nil {
		return err
	}
	if _, err := c.cli.ContainerUnpause(ctx, k.c.GetContainerID(), client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("resume %s: %w", id, err)
	}
	return nil
}

// IsolationAvailable implements Cluster: always, by disconnecting.
func (c *Containers) IsolationAvailable() error { return nil }

// Isolate implements Cluster: the container is disconnected from the run's
// network. Its published HTTP port goes with it, so clients cannot reach
// it either while it is isolated.
func (c *Containers) Isolate(ctx context.Context, id string) error {
	k, err := c.get(id)
	if err != nil {
		return err
	}
	if _, err := c.cli.NetworkDisconnect(ctx, c.net.ID, client.NetworkDisconnectOptions{Container: k.c.GetContainerID(), Force: true}); err != nil {
		return fmt.Errorf("isolate %s: %w", id, err)
	}
	return nil
}

// Rejoin implements Cluster: connected again under its name.
func (c *Containers) Rejoin(ctx context.Context, id string) error {
	k, err := c.get(id)
	if err != nil {
		return err
	}
	_, err = c.cli.NetworkConnect(ctx, c.net.ID, client.NetworkConnectOptions{
		Container: k.c.GetContainerID(), EndpointConfig: &mnetwork.EndpointSettings{Aliases: []string{k.name}},
	})
	if err != nil {
		return fmt.Errorf("rejoin %s: %w", id, err)
	}
	return nil
}

// SaveLogs implements Cluster: each container's log so far.
func (c *Containers) SaveLogs(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save logs: %w", err)
	}
	var errs []error
	for _, k := range c.ctrs {
		f, err := os.Create(filepath.Join(dir, k.node.ID+".log"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := c.writeLogs(ctx, k, f); err != nil {
			errs = append(errs, fmt.Errorf("logs of %s: %w", k.node.ID, err))
		}
		f.Close()
	}
	return errors.Join(errs...)
}

func (c *Containers) writeLogs(ctx context.Context, k *ctr, w interface{ Write([]byte) (int, error) }) error {
	rc, err := c.cli.ContainerLogs(ctx, k.c.GetContainerID(), client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = stdcopy.StdCopy(w, w, rc)
	return err
}

// Close implements Cluster: containers removed (with their volumes), then
// the network, then the image if this run built it.
func (c *Containers) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var errs []error
	c.mu.Lock()
	ctrs := c.ctrs
	c.ctrs = nil
	c.mu.Unlock()
	for _, k := range ctrs {
		if _, err := c.cli.ContainerRemove(ctx, k.c.GetContainerID(), client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !strings.Contains(err.Error(), "No such container") {
			errs = append(errs, fmt.Errorf("remove container %s: %w", k.name, err))
		}
	}
	if c.net != nil {
		if _, err := c.cli.NetworkRemove(ctx, c.net.ID, client.NetworkRemoveOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("remove network %s: %w", c.net.Name, err))
		}
	}
	if c.built {
		if _, err := c.cli.ImageRemove(ctx, c.image, client.ImageRemoveOptions{Force: true, PruneChildren: true}); err != nil {
			errs = append(errs, fmt.Errorf("remove image %s: %w", c.image, err))
		}
	}
	if c.cli != nil {
		errs = append(errs, c.cli.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close rqlite containers: %w", err)
	}
	return nil
}

// Leftovers lists the containers, networks and images labelled with run
// (or with any run, when run is ""): after Close there are none.
func Leftovers(ctx context.Context, run string) ([]string, error) {
	setRyukDisabled()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("no Docker engine: %w", err)
	}
	defer cli.Close()
	filter := Label
	if run != "" {
		filter += "=" + run
	}
	f := client.Filters{}.Add("label", filter)
	var out []string
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	for _, k := range cs.Items {
		out = append(out, "container "+strings.Join(k.Names, ","))
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, n := range ns.Items {
		out = append(out, "network "+n.Name)
	}
	is, err := cli.ImageList(ctx, client.ImageListOptions{Filters: f})
	if err != nil {
		return nil, err
	}
	for _, i := range is.Items {
		out = append(out, "image "+strings.Join(i.RepoTags, ","))
	}
	return out, nil
}
