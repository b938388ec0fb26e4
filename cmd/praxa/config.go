package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/skills"
)

func init() {
	register(command{name: "config", summary: "validate a praxec.yaml file, or print its JSON Schema", run: runConfig,
		verbs: []string{"validate", "schema"}})
}

// configUsage describes the config subcommands.
func configUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: praxa config <subcommand>")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Subcommands:")
	fmt.Fprintln(w, "  validate FILE...  check each file against the configuration schema and rules;")
	fmt.Fprintln(w, "                    print FILE: ok, or every problem as FILE:LINE:COLUMN: FIELD: MESSAGE")
	fmt.Fprintln(w, "  schema            print the JSON Schema (2020-12) of praxec.yaml")
}

func runConfig(ctx context.Context, env *environment, args []string) error {
	if len(args) == 0 {
		configUsage(env.stderr)
		return errUsage
	}
	switch args[0] {
	case "validate":
		return runConfigValidate(ctx, env, args[1:])
	case "schema":
		return runConfigSchema(ctx, env, args[1:])
	case "help", "-h", "-help", "--help":
		configUsage(env.stdout)
		return nil
	default:
		fmt.Fprintf(env.stderr, "praxa config: unknown subcommand %q\n\n", args[0])
		configUsage(env.stderr)
		return errUsage
	}
}

// runConfigValidate loads every file named. A valid file prints "FILE: ok"
// on stdout; an invalid one prints each of its problems on stderr, and the
// command fails once all files have been checked.
func runConfigValidate(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "config validate", "FILE...")
	textUsage(fs, `Usage: praxa config validate FILE...

Checks each file against the configuration schema and rules. A valid file
prints FILE: ok on stdout, then any warnings on stderr; an invalid one prints
every problem on stderr as FILE:LINE:COLUMN: FIELD: MESSAGE, and the exit status is 1.
`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(env.stderr, "praxa config validate: name the file to check")
		fs.Usage()
		return errUsage
	}
	bad := 0
	for _, file := range fs.Args() {
		cfg, err := config.Load(file)
		if err == nil && cfg.Skills.Dir != "" {
			// The skills the file names are part of it: their front
			// matter is checked too.
			_, err = skills.FromConfig(cfg, nil, "")
		}
		if err == nil && cfg.Scripts.Dir != "" {
			// So are its scripts: each must compile, and each script
			// executor must name one.
			_, err = scripts.FromConfig(cfg)
		}
		var le *config.LoadError
		var pe *iofs.PathError
		switch {
		case err == nil:
			fmt.Fprintf(env.stdout, "%s: ok\n", file)
			for _, w := range cfg.Warnings() {
				fmt.Fprintf(env.stderr, "%s: warning: %s\n", file, w)
			}
			continue
		case errors.As(err, &le):
			fmt.Fprintln(env.stderr, err.Error()) // every file's problems, skills included
		case errors.As(err, &pe):
			fmt.Fprintf(env.stderr, "%s: %v\n", file, pe.Err)
		default:
			fmt.Fprintf(env.stderr, "%s: %v\n", file, err)
		}
		bad++
	}
	switch {
	case bad == 0:
		return nil
	case fs.NArg() == 1:
		return fmt.Errorf("%s is not valid", fs.Arg(0))
	default:
		return fmt.Errorf("%d of %d files are not valid", bad, fs.NArg())
	}
}

// runConfigSchema prints the JSON Schema every praxec.yaml is checked against.
func runConfigSchema(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "config schema", "")
	textUsage(fs, `Usage: praxa config schema

Prints the JSON Schema (2020-12) every praxec.yaml is checked against.
`)
	if err := parseFlagsOnly(env, fs, args); err != nil {
		return err
	}
	_, err := env.stdout.Write(config.Schema())
	return err
}
