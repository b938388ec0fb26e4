package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway/config"
)

// configEnv names the environment variable that --config defaults to, in
// serve and in every command that works on a gateway's configuration.
const configEnv = "PRAXA_CONFIG"

// defaultConfigFile is the file a command reads when neither --config nor
// PRAXA_CONFIG names one and it exists in the working directory.
const defaultConfigFile = "praxec.yaml"

// configSource is the configuration a command runs on. Every command
// finds it the one way serve does (serveFlags.findConfig), so that an
// operator command run beside a gateway loads what that gateway runs.
type configSource struct {
	// path is the file: --config (default $PRAXA_CONFIG), else
	// ./praxec.yaml when it exists; "" when there is none.
	path string
	// dev: without a file, the example configuration --dev runs (the
	// embedded examples/praxec.yaml).
	dev bool
}

// findConfig is the configuration the flags select: the file --config or
// PRAXA_CONFIG names, else ./praxec.yaml when it exists, else with --dev
// the embedded example configuration, else none (the built-in defaults:
// no workflows, no issuers).
func (f serveFlags) findConfig() configSource {
	path := f.config
	if path == "" {
		if _, err := os.Stat(defaultConfigFile); err == nil {
			path = defaultConfigFile
		}
	}
	return configSource{path: path, dev: f.dev}
}

// found reports whether there is a configuration beyond the built-in
// defaults.
func (s configSource) found() bool { return s.path != "" || s.dev }

// load reads the configuration.
func (s configSource) load() (*config.Config, error) {
	cfg, _, err := s.read()
	return cfg, err
}

// read is load with the bytes read, for a reload's digest: the file's,
// the embedded example's, or none for the defaults.
func (s configSource) read() (*config.Config, []byte, error) {
	switch {
	case s.path != "":
		return config.LoadData(s.path)
	case s.dev:
		cfg, err := config.Parse(examples.PraxecYAMLName, examples.PraxecYAML)
		return cfg, examples.PraxecYAML, err
	default:
		return config.Default(), nil, nil
	}
}

// String names the configuration for a message.
func (s configSource) String() string {
	switch {
	case s.path != "":
		return s.path
	case s.dev:
		return "the example configuration of --dev (examples/praxec.yaml, embedded)"
	}
	return "no configuration (the built-in defaults: no workflows, no issuers)"
}

// missing explains, for a command that needs what the gateway's
// configuration defines (its workflows, its issuers), what it loaded and
// how to give it the configuration the gateway runs; dataDir is the data
// directory it works on (a gateway run there with --dev is named).
func (s configSource) missing(dataDir string) string {
	var b strings.Builder
	if s.found() {
		fmt.Fprintf(&b, "This command loaded %s.", s)
	} else {
		cwd, err := os.Getwd()
		if err != nil {
			cwd = "the working directory"
		}
		fmt.Fprintf(&b, "No configuration was found (no --config, no %s, no %s in %s, no --dev), so this command runs on the built-in defaults: no workflows, no token issuers.",
			configEnv, defaultConfigFile, cwd)
	}
	b.WriteString("\nGive it the configuration the gateway runs: --config FILE, or " + configEnv + "=FILE")
	if !s.found() {
		b.WriteString(", or run it in the directory of that " + defaultConfigFile)
	}
	b.WriteString(".")
	if _, err := readDevIssuer(dataDir); err == nil && s.path == "" {
		fmt.Fprintf(&b, "\nThe gateway of %s ran with praxa serve --dev: --dev loads the example workflows it runs and trusts its dev issuer.", dataDir)
	}
	return b.String()
}
