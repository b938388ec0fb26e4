// Command praxa is the Praxa gateway's one binary: it serves the REST API and
// MCP, prints the contract's tool list and OpenAPI document, and runs the
// operator and conformance tools.
//
// Usage:
//
//	praxa <command> [flags]
//
// Run "praxa help" for the list of commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// command is one subcommand of the binary.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *environment, args []string) error

	// verbs are the command's subcommands (praxa lexicon define), which
	// shell completion offers after the command.
	verbs []string
}

// environment is what a command may touch: its streams and the process
// environment, so tests can run commands in process.
type environment struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// errUsage marks a command-line mistake; the command has already said what it was.
var errUsage = errors.New("usage error")

// commands lists every subcommand; each file of this package adds its own
// through register.
var commands []command

func register(c command) {
	commands = append(commands, c)
	slices.SortFunc(commands, func(a, b command) int { return strings.Compare(a.name, b.name) })
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := &environment{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	code := run(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes one command line and returns the process exit status.
func run(ctx context.Context, env *environment, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, env, args[1:])
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		default:
			fmt.Fprintf(env.stderr, "praxa %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(env.stderr, "praxa: unknown command %q\n\n", args[0])
	usage(env.stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "praxa: a governed gateway for AI agents' tools")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: praxa <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "praxa <command> -h" for a command's flags.`)
}

// newFlagSet returns a flag set that reports errors on env's stderr and lets
// run decide the exit status. Its usage starts with usageLine: args (the
// operands, and any flag the command requires, e.g. "FILE --tenant T") and
// then every other flag of the set, read from the set itself, so that the
// line cannot leave a flag out.
func newFlagSet(env *environment, name, args string) *flag.FlagSet {
	fs := flag.NewFlagSet("praxa "+name, flag.ContinueOnError)
	fs.SetOutput(&usageWriter{stdout: env.stdout, stderr: env.stderr})
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\n\nFlags:\n", usageLine(fs, name, args))
		fs.PrintDefaults()
	}
	return fs
}

// textUsage makes text, printed as it stands, the usage of fs: for a
// command whose usage is prose rather than its flags.
func textUsage(fs *flag.FlagSet, text string) {
	fs.Usage = func() { fmt.Fprint(fs.Output(), text) }
}

// usageWidth is the column the usage line wraps at.
const usageWidth = 100

// usageLine is "Usage: praxa NAME ARGS [--flag VALUE]...": the flags of
// fs in its order (by name) that args does not already name, each as
// flagSynopsis shows it, wrapped at usageWidth under the first flag.
func usageLine(fs *flag.FlagSet, name, args string) string {
	head := "Usage: praxa " + name
	if args != "" {
		head += " " + args
	}
	var words []string
	fs.VisitAll(func(f *flag.Flag) {
		if !mentionsFlag(args, f.Name) {
			words = append(words, "["+flagSynopsis(f)+"]")
		}
	})
	indent := len("Usage: praxa " + name + " ")
	if indent > usageWidth/3 {
		indent = 8
	}
	var b strings.Builder
	b.WriteString(head)
	col := len(head)
	for _, w := range words {
		if col+1+len(w) > usageWidth && col > indent {
			b.WriteString("\n" + strings.Repeat(" ", indent-1))
			col = indent - 1
		}
		b.WriteString(" " + w)
		col += 1 + len(w)
	}
	return b.String()
}

// mentionsFlag reports whether text names the flag --name (or -name) as
// a word of its own.
func mentionsFlag(text, name string) bool {
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '[' || r == ']' || r == '|' }) {
		if w == "--"+name || w == "-"+name {
			return true
		}
	}
	return false
}

// flagSynopsis is a flag as the usage line shows it: --name for a boolean,
// else --name VALUE, VALUE being the back-quoted word of its usage text
// (the flag package's convention, which -h shows too) or, without one,
// the last word of its name in capitals (--data-dir DIR).
func flagSynopsis(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "--" + f.Name
	}
	value, _ := flag.UnquoteUsage(f)
	if !strings.Contains(f.Usage, "`") {
		value = strings.ToUpper(f.Name[strings.LastIndex(f.Name, "-")+1:])
	}
	return "--" + f.Name + " " + value
}

// verbUsage answers a command line that names no verb the command knows:
// the usage of fs on stdout when args ask for help, else on stderr with
// errUsage.
func verbUsage(fs *flag.FlagSet, args []string) error {
	if w, ok := fs.Output().(*usageWriter); ok {
		w.help = len(args) > 0 && asksHelp(args[:1])
		fs.Usage()
		if w.help {
			return flag.ErrHelp
		}
	}
	return errUsage
}

// usageWriter is a flag set's output: a usage asked for (-h) goes to
// stdout, so that `praxa serve -h | less` shows it; a usage printed for a
// mistake goes to stderr with the error.
type usageWriter struct {
	stdout, stderr io.Writer
	help           bool
}

func (w *usageWriter) Write(b []byte) (int, error) {
	if w.help {
		return w.stdout.Write(b)
	}
	return w.stderr.Write(b)
}

// asksHelp reports whether args ask for help as the flag package reads
// them: -h, -help, --h or --help before a "--".
func asksHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--h", "--help":
			return true
		}
	}
	return false
}

// parseVerbFlags parses rest, the words after a verb: its first word, when
// the verb takes an argument (takesArg) and the word is not one of fs's
// flags, is the argument it returns; the others are fs's flags. An id may
// begin with "-" (a token's jti is base64url): only a word naming a flag
// of fs, help, or "--" is read as a flag.
func parseVerbFlags(fs *flag.FlagSet, rest []string, takesArg bool) (string, error) {
	var arg string
	if takesArg && len(rest) > 0 && !namesFlag(fs, rest[0]) {
		arg, rest = rest[0], rest[1:]
	}
	return arg, parseFlags(fs, rest)
}

// namesFlag reports whether word is a flag of fs as the flag package reads
// it (-name, --name, -name=value), a request for help, or "--".
func namesFlag(fs *flag.FlagSet, word string) bool {
	if word == "--" {
		return true
	}
	name, ok := strings.CutPrefix(word, "-")
	if !ok {
		return false
	}
	name = strings.TrimPrefix(name, "-")
	name, _, _ = strings.Cut(name, "=")
	return name == "h" || name == "help" || fs.Lookup(name) != nil
}

// parseFlags parses args, mapping a parse failure to errUsage.

func parseFlags(fs *flag.FlagSet, args []string) error {
	if w, ok := fs.Output().(*usageWriter); ok {
		w.help = asksHelp(args)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

// parseFlagsOnly is parseFlags for a command that takes no arguments: one
// left after the flags is refused (errUsage) with a line naming it.
func parseFlagsOnly(env *environment, fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return errUsage
	}
	return nil
}
