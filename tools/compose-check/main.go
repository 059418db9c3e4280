// compose-check: `docker compose config --quiet` without Docker.
//
// This machine has the Docker client but no Compose plugin. Docker Compose v2 loads,
// interpolates and validates a compose file with compose-go (the Compose Specification's
// reference loader, the same module and schema `docker compose config` runs); this
// program runs that loader on the files it is given and exits 1 with its message when the
// file is invalid. tests/unit/test_deployment.py runs it on docker-compose.yaml.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	options, err := cli.NewProjectOptions(os.Args[1:], cli.WithOsEnv, cli.WithDotEnv)
	if err == nil {
		_, err = options.LoadProject(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
