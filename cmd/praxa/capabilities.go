package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/pins"
)

func init() {
	register(command{name: "capabilities", summary: "list or accept imported capabilities whose upstream definition changed", run: runCapabilities,
		verbs: []string{"list", "accept"}})
}

// runCapabilities acts on the pins of imported capabilities in the data
// directory's store as an operator (the principal of --token, or the
// operating-system user: operator.go): praxa capabilities list | accept
// NAME [--sha256 H]. It needs no running gateway: the
// offered definition is stored beside the pin, and a gateway holding the
// capability in quarantine lifts it at the next call.
func runCapabilities(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "capabilities", "list|accept NAME")
	sum := fs.String("sha256", "", "accept: the SHA-256 of the offered definition reviewed (refused when the upstream now offers another)")
	format := fs.String("format", "table", "list: table or json (json holds both definitions)")
	token := operatorToken(fs)
	var f serveFlags
	f.registerFor(env, fs, true, false)
	if len(args) == 0 || (args[0] != "list" && args[0] != "accept") {
		return verbUsage(fs, args)
	}
	verb := args[0]
	name, err := parseVerbFlags(fs, args[1:], verb == "accept")
	if err != nil {
		return err
	}
	if verb == "accept" && name == "" {
		fs.Usage()
		return errUsage
	}
	cfg, log, st, err := openOperatorStore(ctx, env, f)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := gateway.New(st, &gateway.Options{Logger: log, LeaseTTL: cfg.LeaseTTL()})
	defer svc.Close(ctx)
	if verb == "list" {
		pending, err := svc.Pins().Pending(ctx)
		if err != nil {
			return err
		}
		if *format == "json" {
			if pending == nil {
				pending = []pins.QuarantinedCapability{}
			}
			return json.NewEncoder(env.stdout).Encode(map[string]any{"capabilities": pending})
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CAPABILITY\tCONNECTION\tTOOL\tPINNED\tOFFERED\tSINCE")
		for _, q := range pending {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.Capability, q.Connection, q.Tool, q.PinnedSHA256, q.OfferedSHA256, q.Since.Format("2006-01-02T15:04:05Z"))
		}
		return tw.Flush()
	}
	operator, err := operatorPrincipal(ctx, env, f, cfg, st, *token, contracts.ScopeCapabilitiesAdmin, "")
	if err != nil {
		return err
	}
	res, err := svc.Pins().Accept(ctx, operator, pins.AcceptRequest{Name: name, SHA256: *sum})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s accepted: sha256 %s (was %s); a gateway holding it in quarantine serves it from its next call\n",
		res.Capability, res.SHA256, res.PreviousSHA256)
	return nil
}
