package config

import (
	"regexp"
	"strings"
)

// apiKeyPattern is the pattern of an llm connection's apiKey in
// schema.json: a ${NAME} reference, never a key.
const apiKeyPattern = `^\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}$`

// parallelBranches checks the branches of the parallel executor at ptr:
// each is an executor of a kind a branch may have (Kind.Branchable: one
// call, a connection's or noop; a branch cannot queue a person, start a
// sub-workflow or nest another parallel executor), checked as any
// executor is.
func (c *checker) parallelBranches(ptr string, ids []string) {
	bp := ptr + "/branches"
	branches, ok := c.obj(bp)
	if !ok {
		return
	}
	for _, name := range c.keys(bp, branches) {
		xp := bp + "/" + escapePointer(name)
		if !idRE.MatchString(name) {
			c.reportKey(xp, "is not a valid branch name: use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit")
		}
		kind, ok := c.str(xp + "/kind")
		if ok && !Kind(kind).Branchable() && !c.reported[xp+"/kind"] {
			c.report(xp+"/kind", "is %s, which cannot be a branch of a parallel executor: a branch is one call, of kind %s", kind,
				joinOr(kindNames(func(k *kindInfo) bool { return k.branch })))
			continue
		}
		c.executor(xp, ids)
	}
}

// cliExecutor checks what the cli executor at ptr hands its command from
// the scope. Its paths are checked against the roots of its connection,
// which must declare some. A $. argument carries a value the caller
// controls, so each must be a declared path (paths.read or paths.write:
// checked against the connection's roots, and passed as the absolute path
// that was checked), unless unconfinedArguments says the operator knows
// they are not paths. Each optionArguments entry must be one of those
// arguments, and not a path: a path the caller gives never starts with
// '-'.
func (c *checker) cliExecutor(ptr string, k *kindInfo) {
	if name, conn, _ := c.namedConnection(ptr); conn != nil && ofKind(conn, k.connection) {
		if _, paths := c.obj(ptr + "/paths"); paths {
			if _, roots := conn["roots"]; !roots {
				c.reportKey(ptr+"/paths", "are checked against the roots of the connection, and the cli connection %s declares none: add roots (read, write) to it", name)
			}
		}
	}
	paths := map[string]bool{}
	for _, m := range []string{"/paths/read", "/paths/write"} {
		c.each(ptr+m, func(_, p string) { paths[p] = true })
	}
	unconfined, _ := lookup(c.doc.value, ptr+"/unconfinedArguments")
	forwarded := map[string]bool{}
	c.each(ptr+"/args", func(ap, a string) {
		if !strings.HasPrefix(a, "$.") {
			return
		}
		forwarded[a] = true
		if !paths[a] && unconfined != true && checkPath(a, executorRoots) == "" {
			c.report(ap, "hands the command %s, a value the caller controls, unchecked: "+
				"list it under paths.read or paths.write (checked against the connection's roots; the command gets the absolute path checked), "+
				"or set unconfinedArguments: true on this executor if it is never a path", a)
		}
	})
	c.each(ptr+"/optionArguments", func(op, o string) {
		switch {
		case paths[o]:
			c.report(op, "is a path argument, and a path the caller gives may never start with '-' (the command would read it as an option): remove it from optionArguments")
		case !forwarded[o]:
			c.report(op, "is not one of the executor's $. arguments: optionArguments names arguments that carry the caller's values, as args writes them ($.arguments.NAME); a literal of args is the operator's own and passes as it is")
		}
	})
}

// llmExecutor checks the llm executor at ptr: the placeholders of its
// templates are paths into the executor's roots, and its output schema
// compiles.
func (c *checker) llmExecutor(ptr string, _ *kindInfo) {
	for _, m := range []string{"/prompt", "/system"} {
		s, ok := c.str(ptr + m)
		if !ok {
			continue
		}
		for _, path := range PromptPaths(s) {
			if msg := checkPath(path, executorRoots); msg != "" {
				c.report(ptr+m, "has the placeholder {{%s}}, which %s", path, msg)
			} else if !strings.HasPrefix(path, "$.") {
				c.report(ptr+m, "has the placeholder {{%s}}, which is not a path: write {{$.arguments.NAME}}, {{$.context.NAME}} or {{$.input.NAME}}", path)
			}
		}
	}
	if m, ok := c.obj(ptr + "/outputSchema"); ok && !c.reportedUnder(ptr+"/outputSchema") {
		c.schemaCompiles(ptr+"/outputSchema", m, "outputSchema", "an output schema")
	}
}

// placeholder matches {{ PATH }} in an llm executor's prompt or system
// template.
var placeholder = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// PromptPaths returns the paths of the placeholders of an llm template, in
// order.
func PromptPaths(tmpl string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(tmpl, -1) {
		out = append(out, m[1])
	}
	return out
}

// RenderPrompt fills the placeholders {{PATH}} of an llm template with
// what value gives for each path: a string as it is, anything else as
// JSON (encode), nothing for nil.
func RenderPrompt(tmpl string, value func(path string) any, encode func(any) string) string {
	return placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		v := value(placeholder.FindStringSubmatch(m)[1])
		switch v := v.(type) {
		case nil:
			return ""
		case string:
			return v
		default:
			return encode(v)
		}
	})
}
