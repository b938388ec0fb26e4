package config

import (
	"errors"
	"strings"
	"testing"
)

// TestCLIArguments: a cli executor that hands its command a $. argument
// (a value the caller controls) must declare it a path, or say with
// unconfinedArguments that it is not one; optionArguments names only such
// arguments, never a path. Every opt-out is a warning of config validate.
func TestCLIArguments(t *testing.T) {
	const conns = `connections:
  sh: { kind: cli, command: /bin/cp, roots: { read: [/srv], write: [/tmp] } }
proxy:
  expose:
    - name: a.b
      executor:
`
	const fix = "hands the command $.arguments.dst, a value the caller controls, unchecked: list it under paths.read or paths.write " +
		"(checked against the connection's roots; the command gets the absolute path checked), or set unconfinedArguments: true on this executor if it is never a path"
	const notArgument = "is not one of the executor's $. arguments: optionArguments names arguments that carry the caller's values, " +
		"as args writes them ($.arguments.NAME); a literal of args is the operator's own and passes as it is"
	cases := []struct {
		name, executor string
		// refused is the one problem, FILE:LINE:COLUMN: FIELD: MESSAGE; ""
		// when the configuration loads.
		refused string
		// warning is a word the one warning holds; "" when there is none.
		warning string
	}{
		{name: "every argument a declared path",
			executor: `{ kind: cli, connection: sh, args: [$.arguments.src, $.arguments.dst], paths: { read: [$.arguments.src], write: [$.arguments.dst] } }`},
		{name: "an argument no path declares",
			executor: `{ kind: cli, connection: sh, args: [$.arguments.src, $.arguments.dst], paths: { read: [$.arguments.src] } }`,
			refused:  "x.yaml:7:62: proxy.expose[0].executor.args[1]: " + fix},
		{name: "no paths at all (the issue's ../../outside/secret)",
			executor: `{ kind: cli, connection: sh, args: ["-r", $.arguments.dst, /tmp/out] }`,
			refused:  "x.yaml:7:51: proxy.expose[0].executor.args[1]: " + fix},
		{name: "unconfined, warned",
			executor: `{ kind: cli, connection: sh, args: [$.arguments.src, $.arguments.dst], paths: { read: [$.arguments.src] }, unconfinedArguments: true }`,
			warning:  "proxy.expose[0].executor: unconfinedArguments: $.arguments.dst reach the command of connection sh with no path check"},
		{name: "unconfined with nothing unconfined",
			executor: `{ kind: cli, connection: sh, args: [-r, /srv/a, /tmp/b], unconfinedArguments: true }`},
		{name: "literals only", executor: `{ kind: cli, connection: sh, args: [-r, /srv/a, /tmp/b] }`},
		{name: "an option argument",
			executor: `{ kind: cli, connection: sh, args: [$.arguments.flag, $.arguments.src], paths: { read: [$.arguments.src] }, unconfinedArguments: true, optionArguments: [$.arguments.flag] }`,
			warning:  "$.arguments.flag reach"},
		{name: "a path may not be an option",
			executor: `{ kind: cli, connection: sh, args: [$.arguments.src], paths: { read: [$.arguments.src] }, optionArguments: [$.arguments.src] }`,
			refused:  "x.yaml:7:117: proxy.expose[0].executor.optionArguments[0]: is a path argument, and a path the caller gives may never start with '-' (the command would read it as an option): remove it from optionArguments"},
		{name: "an option argument that is not an argument",
			executor: `{ kind: cli, connection: sh, args: [$.arguments.src], paths: { read: [$.arguments.src] }, optionArguments: [$.arguments.flag] }`,
			refused:  "x.yaml:7:117: proxy.expose[0].executor.optionArguments[0]: " + notArgument},
		{name: "an option argument that is not a path into the scope",
			executor: `{ kind: cli, connection: sh, args: [--verbose], optionArguments: [--verbose] }`,
			refused:  "x.yaml:7:75: proxy.expose[0].executor.optionArguments[0]: " + notArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("x.yaml", []byte(conns+"        "+tc.executor+"\n"))
			if tc.refused != "" {
				var le *LoadError
				if !errors.As(err, &le) || le.Error() != tc.refused {
					t.Fatalf("Parse = %v\nwant %s", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			w := cfg.Warnings()
			switch {
			case tc.warning == "" && len(w) > 0:
				t.Errorf("warnings: %q", w)
			case tc.warning != "" && (len(w) != 1 || !strings.Contains(w[0], tc.warning)):
				t.Errorf("warnings %q, want one holding %q", w, tc.warning)
			}
		})
	}
}

// TestCLIPathsNeedRoots: a cli executor's paths are checked against the
// roots of its connection, so a cli connection without roots is refused
// for them; a connection of another kind is refused for its kind alone.
func TestCLIPathsNeedRoots(t *testing.T) {
	const file = `connections:
  sh: { kind: cli, command: /bin/cat }
  api: { kind: rest, baseUrl: "https://api.example" }
proxy:
  expose:
    - name: a.b
      executor: { kind: cli, connection: sh, args: [$.arguments.src], paths: { read: [$.arguments.src] } }
    - name: a.c
      executor: { kind: cli, connection: api, args: [$.arguments.src], paths: { read: [$.arguments.src] } }
`
	want := "x.yaml:7:71: proxy.expose[0].executor.paths: are checked against the roots of the connection, and the cli connection sh declares none: add roots (read, write) to it\n" +
		"x.yaml:9:42: proxy.expose[1].executor.connection: names the rest connection api: a cli executor needs a cli connection"
	_, err := Parse("x.yaml", []byte(file))
	var le *LoadError
	if !errors.As(err, &le) || le.Error() != want {
		t.Fatalf("Parse = %v\nwant %s", err, want)
	}
}
