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

// versionLine describes the running binary in one line.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "praxa (no build information) contract " + contracts.ServerVersion
	}
	var rev, at, dirty string
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
	parts := []string{"praxa", bi.Main.Version}
	if rev != "" {
		parts = append(parts, "revision "+rev+dirty)
	}
	if at != "" {
		parts = append(parts, "built from "+at)
	}
	parts = append(parts, bi.GoVersion, "contract "+contracts.ServerVersion)
	return strings.Join(parts, " ")
}

// runCompletion prints a completion script for a shell: the commands, and
// the flags of the command being completed (read from its -h).
func runCompletion(_ context.Context, env *environment, args []string) error {
	if len(args) != 1 {
		fmt.Fprintln(env.stderr, "Usage: praxa completion bash|zsh|fish")
		fmt.Fprintln(env.stderr, `  bash: source <(praxa completion bash)`)
		fmt.Fprintln(env.stderr, `  zsh:  source <(praxa completion zsh)`)
		fmt.Fprintln(env.stderr, `  fish: praxa completion fish | source`)
		return errUsage
	}
	names := make([]string, 0, len(commands))
	for _, c := range commands {
		names = append(names, c.name)
	}
	words := strings.Join(names, " ")
	switch args[0] {
	case "bash":
		fmt.Fprintf(env.stdout, `# bash completion for praxa: source <(praxa completion bash)
_praxa() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W %q -- "$cur"))
	elif [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(praxa "${COMP_WORDS[1]}" -h 2>/dev/null | sed -n 's/^  \(-[a-z-]*\).*/-\1/p')" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _praxa praxa
`, words)
	case "zsh":
		fmt.Fprintf(env.stdout, `#compdef praxa
# zsh completion for praxa: source <(praxa completion zsh)
_praxa() {
	if (( CURRENT == 2 )); then
		compadd -- %s
	elif [[ $words[CURRENT] == -* ]]; then
		compadd -- $(praxa $words[2] -h 2>/dev/null | sed -n 's/^  \(-[a-z-]*\).*/-\1/p')
	else
		_files
	fi
}
compdef _praxa praxa
`, words)
	case "fish":
		fmt.Fprintf(env.stdout, "# fish completion for praxa: praxa completion fish | source\n")
		for _, c := range commands {
			fmt.Fprintf(env.stdout, "complete -c praxa -n __fish_use_subcommand -a %s -d %q\n", c.name, c.summary)
		}
	default:
		fmt.Fprintf(env.stderr, "praxa completion: no completion for the shell %q (bash, zsh or fish)\n", args[0])
		return errUsage
	}
	return nil
}
