package main

import (
	"context"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/praxa/praxa/openapi"
)

func init() {
	register(command{name: "openapi", summary: "print the OpenAPI 3.1 document of the /v8 REST API", run: runOpenAPI})
}

func runOpenAPI(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "openapi", "")
	format := fs.String("format", "json", "output format: json or yaml")
	if err := parseFlagsOnly(env, fs, args); err != nil {
		return err
	}
	var marshal func(*openapi3.T) ([]byte, error)
	switch *format {
	case "json":
		marshal = openapi.MarshalJSON
	case "yaml":
		marshal = openapi.MarshalYAML
	default:
		fmt.Fprintf(env.stderr, "praxa openapi: unknown format %q (json or yaml)\n", *format)
		return errUsage
	}
	doc, err := openapi.Build()
	if err != nil {
		return err
	}
	b, err := marshal(doc)
	if err != nil {
		return err
	}
	if _, err := env.stdout.Write(b); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
