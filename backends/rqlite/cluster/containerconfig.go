package cluster

// The names here are those of a container cluster that every build knows;
// containers.go starts one, and a build with the tag
// storecheck_nocontainers (the worker processes' binary, which never
// starts a container) leaves it out, and testcontainers-go with it
// (containers_off.go).

// DefaultImage is the official rqlite image, at a pinned tag. It is used if
// it is on the machine; storecheck never pulls (docker pull it first).
const DefaultImage = "rqlite/rqlite:10.2.7"

// BuildImage, as ContainerConfig.Image, builds a throwaway FROM-scratch
// image from a local static rqlited (BuildScratchImage) and removes it on
// Close: for machines that have Docker but no registry.
const BuildImage = "build"

// Label marks every container and network a run creates, with the run's
// id as its value.
const Label = "storecheck.rqlite.run"

// ContainerConfig is what StartContainers needs.
type ContainerConfig struct {
	Config
	// Image to run; "" means DefaultImage, BuildImage a throwaway image
	// built from Rqlited.
	Image string
	// Rqlited is the static binary BuildImage copies; "" means $RQLITED or
	// PATH.
	Rqlited string
}
