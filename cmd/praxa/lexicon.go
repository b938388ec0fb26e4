package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/ids"
)

func init() {
	register(command{name: "lexicon", summary: "define a lexicon term, add aliases to one, or list the lexicon",
		verbs: []string{"define", "alias", "list"}, run: runLexicon})
}

// lexiconVerbs are the verbs of praxa lexicon with their operands; each
// verb's flags are in its own usage (praxa lexicon VERB -h).
var lexiconVerbs = [][2]string{{"define", "TERM DEFINITION --tenant T"}, {"alias", "TERM ALIAS... --tenant T"}, {"list", ""}}

// lexiconUsage writes the usage of praxa lexicon: a line per verb.
func lexiconUsage(w io.Writer) {
	for i, v := range lexiconVerbs {
		head := "Usage: praxa lexicon "
		if i > 0 {
			head = "       praxa lexicon "
		}
		fmt.Fprintln(w, strings.TrimRight(head+v[0]+" "+v[1], " "))
	}
	fmt.Fprintln(w, "\nRun \"praxa lexicon define -h\" (alias, list) for a verb's flags.")
}

// runLexicon is the operator's path to the lexicon (the one the
// LEXICON_WRITES_DISABLED answer names in operatorCommand): it opens the
// data directory's store with the configuration the gateway loads, and
// writes the overlay the running gateways read, whether or not they accept
// defines from callers. A define or an alias is the write praxec.command
// define makes, with its checks and its lexicon.defined audit event (to
// the configured audit.sink too), by the operator (the principal of
// --token, or the operating-system user: operator.go) in the tenant
// --tenant names (with a token, its own).
func runLexicon(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 && asksHelp(args[:1]) {
		lexiconUsage(env.stdout)
		return nil
	}
	i := slices.IndexFunc(lexiconVerbs, func(v [2]string) bool { return len(args) > 0 && v[0] == args[0] })
	if i < 0 {
		lexiconUsage(env.stderr)
		return errUsage
	}
	verb := args[0]
	fs := newFlagSet(env, "lexicon "+verb, lexiconVerbs[i][1])
	var tenant, boundedContext, refs, governance, format, token *string
	if verb == "list" {
		format = fs.String("format", "table", "table or json")
		tenant = fs.String("tenant", "", "also list the tenant's placeholder terms: unknown subjects its paused commands wait on (PENDING_DEFINITION)")
	} else {
		tenant = fs.String("tenant", "", "the tenant the operator acts for, recorded on the lexicon.defined audit event (required without a token; with one, its tenant; the lexicon itself is gateway-wide)")
		token = operatorToken(fs)
	}
	if verb == "define" {
		boundedContext = fs.String("context", "", "the term's bounded context (bounded_context)")
		refs = fs.String("refs", "", "comma-separated refs: other names that look the term up")
		governance = fs.String("governance", "", "who governs the term, e.g. human-only")
	}
	var f serveFlags
	f.registerFor(env, fs, true, false)
	positional, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	usageErr := func(msg string) error {
		fmt.Fprintf(env.stderr, "praxa lexicon %s: %s\n%s\n", verb, msg, usageLine(fs, "lexicon "+verb, lexiconVerbs[i][1]))
		return errUsage
	}
	switch {
	case verb == "define" && len(positional) != 2:
		return usageErr("name the term and its definition (quote each one that has spaces)")
	case verb == "alias" && len(positional) < 2:
		return usageErr("name the term and at least one alias")
	case verb == "list" && len(positional) != 0:
		return usageErr("list takes no arguments")
	case verb == "list" && *format != "table" && *format != "json":
		return usageErr(fmt.Sprintf("unknown format %q", *format))
	case verb != "list" && *tenant == "" && *token == "" && env.getenv(operatorTokenEnv) == "":
		return usageErr("--tenant is required")
	}
	cfg, _, st, err := openOperatorStore(ctx, env, f)
	if err != nil {
		return err
	}
	defer st.Close()
	// The configuration's terms are the base the overlay is merged over:
	// a define is checked against the terms the gateway answers.
	svc := gateway.New(st, &gateway.Options{Lexicon: cfg.Lexicon})
	defer svc.Close(ctx)
	if verb == "list" {
		return listLexicon(ctx, env, svc, *format, *tenant)
	}
	definition := map[string]any{}
	if verb == "define" {
		definition["definition_short"] = positional[1]
		if *boundedContext != "" {
			definition["boundedContext"] = *boundedContext
		}
		if *governance != "" {
			definition["governance"] = *governance
		}
		if *refs != "" {
			var list []any
			for r := range strings.SplitSeq(*refs, ",") {
				if r = strings.TrimSpace(r); r != "" {
					list = append(list, r)
				}
			}
			definition["refs"] = list
		}
	} else {
		aliases := make([]any, 0, len(positional)-1)
		for _, a := range positional[1:] {
			aliases = append(aliases, a)
		}
		definition["aliases_add"] = aliases
	}
	operator, err := operatorPrincipal(ctx, env, f, cfg, st, *token, contracts.ScopeLexiconWrite, *tenant)
	if err != nil {
		return err
	}
	trace := ids.Trace()
	res, err := svc.Catalogue().DefineTerm(ctx, operator, contracts.LexiconPrefix+positional[0], definition, trace)
	if err != nil {
		return describeRefusal(err)
	}
	what := "defined"
	if verb == "alias" {
		what = "aliases: " + strings.Join(res.Entry.Aliases, ", ")
	}
	fmt.Fprintf(env.stdout, "%s %s (overlay; audit trace %s)\n", res.Term, what, trace)
	return nil
}

// describeRefusal spells a contract refusal out for a terminal: the
// message, the hint, and each field's problem.
func describeRefusal(err error) error {
	ce := contracts.AsError(err)
	if ce.Code == contracts.CodeInternal {
		return err
	}
	var b strings.Builder
	b.WriteString(ce.Message)
	for _, f := range ce.Fields {
		fmt.Fprintf(&b, "\n  %s: %s", strings.TrimPrefix(f.Pointer, "/"), f.Detail)
	}
	if ce.Hint != "" {
		b.WriteString("\n" + ce.Hint)
	}
	return fmt.Errorf("%s", b.String())
}

// listLexicon prints the merged lexicon: the configuration's terms and
// the overlay's, then, for tenant (when given), its placeholder terms
// (PENDING_DEFINITION) with how many commands wait on each.
func listLexicon(ctx context.Context, env *environment, svc *gateway.Service, format, tenant string) error {
	terms, err := svc.Catalogue().LexiconTerms(ctx)
	if err != nil {
		return err
	}
	var pending []catalogue.PendingTerm
	if tenant != "" {
		if pending, err = svc.Catalogue().PendingTerms(ctx, tenant); err != nil {
			return err
		}
	}
	if format == "json" {
		type row struct {
			Term   string `json:"term"`
			Source string `json:"source"`
			State  string `json:"state,omitempty"`
			config.LexiconEntry
			QueuedCommands int    `json:"queuedCommands,omitempty"`
			Since          string `json:"since,omitempty"`
		}
		out := make([]row, 0, len(terms)+len(pending))
		for _, t := range terms {
			out = append(out, row{Term: t.Term, Source: termSource(t.Overlay), LexiconEntry: t.Entry})
		}
		for _, p := range pending {
			out = append(out, row{Term: p.Term, Source: "pending", State: p.State, QueuedCommands: p.QueuedCommands, Since: p.Since})
		}
		return json.NewEncoder(env.stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TERM\tSOURCE\tCONTEXT\tALIASES\tDEFINITION")
	for _, t := range terms {
		names := append(append([]string{}, t.Entry.Refs...), t.Entry.Aliases...)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Term, termSource(t.Overlay), t.Entry.BoundedContext,
			strings.Join(names, ", "), t.Entry.DefinitionShort)
	}
	for _, p := range pending {
		fmt.Fprintf(tw, "%s\tpending\t\t\t%s: %d command(s) of %s wait on it since %s\n", p.Term, p.State, p.QueuedCommands, tenant, p.Since)
	}
	return tw.Flush()
}

// termSource names where a term comes from.
func termSource(overlay bool) string {
	if overlay {
		return "overlay"
	}
	return "config"
}
