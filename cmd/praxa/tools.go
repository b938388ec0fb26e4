package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/praxa/praxa/contracts"
)

func init() {
	register(command{name: "tools", summary: "print the contract's tool list (tools.json)", run: runTools})
}

func runTools(_ context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "tools", "")
	set := fs.String("set", contracts.SetAll, "print only the tools of this named set ("+setNames()+")")
	format := fs.String("format", "json", "output format: json or table")
	if err := parseFlagsOnly(env, fs, args); err != nil {
		return err
	}
	ts, ok := contracts.LookupToolSet(*set)
	if !ok {
		fmt.Fprintf(env.stderr, "praxa tools: unknown tool set %q (known: %s)\n", *set, setNames())
		return errUsage
	}
	var tools []contracts.Tool
	for t := range contracts.All() {
		if ts.Contains(t.Name) {
			tools = append(tools, t)
		}
	}
	switch *format {
	case "json":
		b, err := contracts.MarshalToolList(tools)
		if err != nil {
			return err
		}
		_, err = env.stdout.Write(b)
		return err
	case "table":
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tMETHOD\tPATH\tSCOPE\tIDEMPOTENCY\tOPERATION")
		for _, t := range tools {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Method, t.Path, t.RequiredScope, t.Idempotency, t.OperationID)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "\n%d tools in set %q, fingerprint sha256:%s\n", len(tools), ts.Name, ts.Fingerprint)
		return nil
	default:
		fmt.Fprintf(env.stderr, "praxa tools: unknown format %q (json or table)\n", *format)
		return errUsage
	}
}

func setNames() string {
	var names []string
	for _, s := range contracts.ToolSets() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}
