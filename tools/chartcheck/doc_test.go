package chartcheck

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// DeployDoc is the deployment guide whose helm commands TestDeployDoc runs.
const DeployDoc = "../../docs/deploy.md"

// TestDeployDoc: every helm command in a sh block of docs/deploy.md,
// run from the repository's root as helm template (an install needs a
// cluster), renders manifests that decode strictly; the guide's last one
// is three replicas on PostgreSQL.
func TestDeployDoc(t *testing.T) {
	doc, err := os.ReadFile(DeployDoc)
	if err != nil {
		t.Fatal(err)
	}
	cmds := shellCommands(doc, "helm")
	if len(cmds) < 2 {
		t.Fatalf("docs/deploy.md has %d helm commands; it walks from one replica to three with at least two", len(cmds))
	}
	var last *Objects
	for _, line := range cmds {
		args, err := splitWords(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		tmpl, err := asTemplate(args[1:])
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out, err := HelmIn("../..", tmpl...)
		if err != nil {
			t.Fatalf("docs/deploy.md: %s: %v", line, err)
		}
		if last, err = Decode(out); err != nil {
			t.Fatalf("docs/deploy.md: %s: %v", line, err)
		}
		t.Logf("%s: %v", strings.Join(tmpl, " "), last.Kinds)
	}
	d := last.Deployments[0]
	if *d.Spec.Replicas != 3 || envVar(d.Spec.Template.Spec.Containers[0], "PRAXA_STORE") == nil || len(last.DisruptionBudgets) != 1 {
		t.Errorf("the guide's last command is not three replicas on PostgreSQL: %d replicas, %v", *d.Spec.Replicas, last.Kinds)
	}
}

// asTemplate turns the arguments of helm install or helm upgrade
// --install into those of helm template; template and lint stay as
// they are.
func asTemplate(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("no helm subcommand")
	}
	switch args[0] {
	case "template", "lint":
		return args, nil
	case "install":
	case "upgrade":
		if !slices.Contains(args, "--install") {
			return nil, fmt.Errorf("helm upgrade without --install needs a release to exist; the guide installs with upgrade --install")
		}
	default:
		return nil, fmt.Errorf("helm %s cannot be checked without a cluster (only install, upgrade --install, template and lint)", args[0])
	}
	out := []string{"template"}
	for _, a := range args[1:] {
		switch a {
		case "--install", "--wait", "--atomic", "--rollback-on-failure", "--create-namespace":
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// shellCommands returns the commands of the ```sh blocks of a Markdown
// document whose first word is name, with backslash continuations joined.
func shellCommands(doc []byte, name string) []string {
	var cmds []string
	in, cur := false, ""
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.HasPrefix(line, "```sh"):
			in = true
			continue
		case in && strings.HasPrefix(line, "```"):
			in, cur = false, ""
			continue
		case !in:
			continue
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(line, " "), "\\"); ok {
			cur += cont
			continue
		}
		cur += line
		if f := strings.Fields(cur); len(f) > 0 && f[0] == name {
			cmds = append(cmds, strings.TrimSpace(cur))
		}
		cur = ""
	}
	return cmds
}

// splitWords splits a command line as a POSIX shell would for words
// with single and double quotes and no expansions; a # outside quotes
// starts a comment. An expansion ($, `) is an error: the guide's helm
// commands must be checkable as written.
func splitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c", c)
			}
			quoted := line[i+1 : i+1+j]
			if c == '"' && strings.ContainsAny(quoted, "$`\\") {
				return nil, fmt.Errorf("an expansion in %q", quoted)
			}
			cur.WriteString(quoted)
			inWord = true
			i += j + 1
		case c == '$' || c == '`':
			return nil, fmt.Errorf("an expansion at %q", line[i:])
		case c == '#' && !inWord:
			i = len(line)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func TestSplitWordsAndAsTemplate(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
		err  bool
	}{
		{`helm upgrade --install praxa deploy/helm/praxa --set a=b  # a comment`, []string{"template", "praxa", "deploy/helm/praxa", "--set", "a=b"}, false},
		{`helm install praxa c --set 'x=a b' --set "y=c"`, []string{"template", "praxa", "c", "--set", "x=a b", "--set", "y=c"}, false},
		{`helm template praxa c --set x=$TAG`, nil, true},
		{`helm upgrade praxa c`, nil, true},
		{`helm uninstall praxa`, nil, true},
		{`helm install praxa 'c`, nil, true},
	} {
		words, err := splitWords(tc.line)
		var got []string
		if err == nil {
			got, err = asTemplate(words[1:])
		}
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q (error %v)", tc.line, got, err, tc.want, tc.err)
		}
	}
}
