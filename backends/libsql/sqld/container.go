//go:build !storecheck_nocontainers

package sqld

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// httpPort is sqld's HTTP port inside the official image.
const httpPort = "8080/tcp"

// containerProvider runs an image that is already on this machine.
type containerProvider struct{ image string }

// NewContainer checks that a Docker engine answers and holds image (""
// means DefaultImage). storecheck never pulls: a CI job pulls first.
func NewContainer(ctx context.Context, image string) (Provider, error) {
	if image == "" {
		image = DefaultImage
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("no Docker engine for image %s: %v", image, err)
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, image); errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("image %s is not on this machine (storecheck does not pull: docker pull it where a registry is reachable)", image)
	} else if err != nil {
		return nil, fmt.Errorf("inspect image %s: %v", image, err)
	}
	return containerProvider{image: image}, nil
}

func (p containerProvider) Name() string    { return "sqld container (" + p.image + ")" }
func (p containerProvider) Version() string { return "image " + p.image }
func (containerProvider) Namespaces() bool  { return false }

// Start runs the image with its HTTP port on a fixed loopback port, so that
// a restart keeps the primary's address. Its data lives in the container;
// an auth key goes in through SQLD_AUTH_JWT_KEY. Namespaces are for
// processes.
func (p containerProvider) Start(ctx context.Context, opt StartOptions) (Server, error) {
	if opt.Net != nil {
		return nil, fmt.Errorf("start %s: a network namespace of the run's own is for sqld processes, not containers", p.image)
	}
	env := map[string]string{"SQLD_NODE": "primary"}
	if opt.Auth != nil {
		env["SQLD_AUTH_JWT_KEY"] = opt.Auth.PublicKey()
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	bind := func(hc *container.HostConfig) {
		hc.PortBindings = network.PortMap{
			network.MustParsePort(httpPort): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(port)}},
		}
	}
	c, err := testcontainers.Run(ctx, p.image,
		testcontainers.WithExposedPorts(httpPort),
		testcontainers.WithEnv(env),
		testcontainers.WithHostConfigModifier(bind),
		testcontainers.WithWaitStrategy(wait.ForHTTP("/health").WithPort(httpPort).WithStartupTimeout(StartTimeout)),
	)
	if err != nil {
		if c != nil {
			err = errors.Join(err, c.Terminate(context.WithoutCancel(ctx)))
		}
		return nil, fmt.Errorf("start %s: %w", p.image, err)
	}
	return &containerServer{c: c, url: fmt.Sprintf("http://127.0.0.1:%d", port)}, nil
}

// containerServer is one sqld container.
type containerServer struct {
	c   *testcontainers.DockerContainer
	url string
}

func (s *containerServer) URL() string { return s.url }

// Kill stops the container without a grace period: docker kill.
func (s *containerServer) Kill(ctx context.Context) error {
	zero := time.Duration(0)
	if err := s.c.Stop(ctx, &zero); err != nil {
		return fmt.Errorf("kill sqld container: %w", err)
	}
	return nil
}

// Restart starts the stopped container again; its data and port binding
// are the same.
func (s *containerServer) Restart(ctx context.Context) error {
	if err := s.c.Start(ctx); err != nil {
		return fmt.Errorf("restart sqld container: %w", err)
	}
	return waitHealthy(ctx, s.url, func() error { return nil })
}

// Close removes the container and its volumes.
func (s *containerServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.c.Terminate(ctx, testcontainers.RemoveVolumes()); err != nil {
		return fmt.Errorf("remove sqld container: %w", err)
	}
	return nil
}
