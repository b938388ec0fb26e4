package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/praxa/praxa/contracts"
)

func init() {
	register(command{name: "version", summary: "print the binary's version, VCS revision and Go version", run: runVersion})
	register(command{name: "completion", summary: "print a shell completion script: completion bash|zsh|fish", run: runCompletion})
}

// runVersion prints the module version (a tagged release installed with
// go install …@vX, else "(devel)"), the VCS revision and time the binary
// was built from (with "+dirty" for uncommitted changes), the Go version,
// and the contract's server version.
func runVersion(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "version", "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, versionLine())
	return nil
}

// What the build stamps with -ldflags "-X main.buildVersion=… -X
// main.buildRevision=… -X main.buildTime=…" (deploy/image/build.sh and the
// release builds): the fallback when the binary carries no VCS settings
// (GOFLAGS=-buildvcs=false, a build outside a checkout) or no module
// version ("(devel)").
var buildVersion, buildRevision, buildTime string

// versionLine describes the running binary in one line.
func versionLine() string {
	bi, _ := debug.ReadBuildInfo() // nil without build information
	return describeBuild(bi, buildStamp{version: buildVersion, revision: buildRevision, time: buildTime})
}

// buildStamp is what -ldflags stamped into the binary.
type buildStamp struct{ version, revision, time string }

// describeBuild is versionLine's text for the build information bi (nil:
// none) and the stamp: the module version, else the stamped one; the VCS
// revision and time, else the stamped ones.
func describeBuild(bi *debug.BuildInfo, stamp buildStamp) string {
	if bi == nil && stamp == (buildStamp{}) {
		return "praxa (no build information) contract " + contracts.ServerVersion
	}
	var version, rev, at, dirty, goVersion string
	if bi != nil {
		version, goVersion = bi.Main.Version, bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
	}
	if (version == "" || version == "(devel)") && stamp.version != "" {
		version = stamp.version
	}
	if version == "" {
		version = "(devel)"
	}
	if rev == "" {
		rev, at, dirty = stamp.revision, stamp.time, ""
	}
	parts := []string{"praxa", version}
	if rev != "" {
		parts = append(parts, "revision "+rev+dirty)
	}
	if at != "" {
		parts = append(parts, "built from "+at)
	}
	if goVersion != "" {
		parts = append(parts, goVersion)
	}
	parts = append(parts, "contract "+contracts.ServerVersion)
	return strings.Join(parts, " ")
}

// runCompletion prints a completion script for a shell: the commands, and
// the flags of the command being completed (read from its -h).
func runCompletion(_ context.Context, env *environment, args []string) error {
	if len(args) != 1 || asksHelp(args) {
		w := env.stderr
		if asksHelp(args) {
			w = env.stdout
		}
		fmt.Fprintln(w, "Usage: praxa completion bash|zsh|fish")
		fmt.Fprintln(w, `  bash: source <(praxa completion bash)`)
		fmt.Fprintln(w, `  zsh:  source <(praxa completion zsh)`)
		fmt.Fprintln(w, `  fish: praxa completion fish | source`)
		if w == env.stdout {
			return nil
		}
		return errUsage
	}
	names := make([]string, 0, len(commands))
	for _, c := range commands {
		names = append(names, c.name)
	}
	words := strings.Join(names, " ")
	// The verbs of the commands that have them (praxa lexicon define):
	// offered after the command; a verb's flags come from its own -h.
	var bashVerbs, zshVerbs strings.Builder
	for _, c := range commands {
		if len(c.verbs) > 0 {
			fmt.Fprintf(&bashVerbs, "\t%s) echo %q ;;\n", c.name, strings.Join(c.verbs, " "))
			fmt.Fprintf(&zshVerbs, "\t%s) verbs=(%s) ;;\n", c.name, strings.Join(c.verbs, " "))
		}
	}
	switch args[0] {
	case "bash":
		fmt.Fprintf(env.stdout, `# bash completion for praxa: source <(praxa completion bash)
_praxa_verbs() {
	case $1 in
%s	esac
}
_praxa() {
	local cur=${COMP_WORDS[COMP_CWORD]} verbs
	verbs=$(_praxa_verbs "${COMP_WORDS[1]}")
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W %q -- "$cur"))
	elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$verbs" ] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -W "$verbs" -- "$cur"))
	elif [[ $cur == -* ]]; then
		local cmd=("${COMP_WORDS[1]}")
		if [ -n "$verbs" ] && [ "$COMP_CWORD" -gt 2 ]; then
			cmd+=("${COMP_WORDS[2]}")
		fi
		COMPREPLY=($(compgen -W "$(praxa "${cmd[@]}" -h 2>/dev/null | sed -n 's/^  \(-[a-z-]*\).*/-\1/p')" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _praxa praxa
`, bashVerbs.String(), words)
	case "zsh":
		fmt.Fprintf(env.stdout, `#compdef praxa
# zsh completion for praxa: source <(praxa completion zsh)
_praxa() {
	local -a verbs cmd
	case $words[2] in
%s	esac
	if (( CURRENT == 2 )); then
		compadd -- %s
	elif (( CURRENT == 3 && ${#verbs} )) && [[ $words[CURRENT] != -* ]]; then
		compadd -- $verbs
	elif [[ $words[CURRENT] == -* ]]; then
		cmd=($words[2])
		(( ${#verbs} && CURRENT > 3 )) && cmd+=($words[3])
		compadd -- $(praxa $cmd -h 2>/dev/null | sed -n 's/^  \(-[a-z-]*\).*/-\1/p')
	else
		_files
	fi
}
compdef _praxa praxa
`, zshVerbs.String(), words)
	case "fish":
		fmt.Fprintf(env.stdout, "# fish completion for praxa: praxa completion fish | source\n")
		for _, c := range commands {
			fmt.Fprintf(env.stdout, "complete -c praxa -n __fish_use_subcommand -a %s -d %q\n", c.name, c.summary)
		}
		for _, c := range commands {
			if len(c.verbs) > 0 {
				v := strings.Join(c.verbs, " ")
				fmt.Fprintf(env.stdout, "complete -c praxa -n %q -a %q\n",
					"__fish_seen_subcommand_from "+c.name+"; and not __fish_seen_subcommand_from "+v, v)
			}
		}
	default:
		fmt.Fprintf(env.stderr, "praxa completion: no completion for the shell %q (bash, zsh or fish)\n", args[0])
		return errUsage
	}
	return nil
}
