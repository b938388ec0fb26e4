package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/assembly"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
)

func init() {
	register(command{name: "approvals", summary: "list, approve or reject pending human approvals", run: runApprovals,
		verbs: []string{"list", "approve", "reject"}})
}

// unconfiguredWorkflow is the workflow of the tenant's approval id when
// cfg does not define it (the built-in proxy workflow aside), else "".
func unconfiguredWorkflow(ctx context.Context, st store.Store, tenant, id string, cfg *config.Config) string {
	var def string
	_ = st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		a, err := tx.GetApproval(ctx, tenant, id)
		if err != nil {
			return err
		}
		m, err := tx.GetMission(ctx, tenant, a.WorkflowID)
		if err != nil {
			return err
		}
		if _, ok := cfg.Workflows[m.DefinitionID]; !ok && m.DefinitionID != config.ProxyDefaultWorkflow {
			def = m.DefinitionID
		}
		return nil
	})
	return def
}

// runApprovals acts on the data directory's store as an operator (the
// principal of --token, or the operating-system user: operator.go): praxa
// approvals list|approve ID|reject ID --tenant T.
func runApprovals(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "approvals", "list|approve ID|reject ID")
	tenant := fs.String("tenant", "", "tenant whose approvals to act on (required without a token; with one, its tenant)")
	token := operatorToken(fs)
	note := fs.String("note", "", "a note kept in the audit trail")
	status := fs.String("status", "pending", "list: pending, approved, rejected, cancelled or all")
	format := fs.String("format", "table", "list: table or json")
	var f serveFlags
	f.registerFor(env, fs, true, false)
	if len(args) == 0 || (args[0] != "list" && args[0] != "approve" && args[0] != "reject") {
		return verbUsage(fs, args)
	}
	verb := args[0]
	id, err := parseVerbFlags(fs, args[1:], verb != "list")
	if err != nil {
		return err
	}
	if (*tenant == "" && *token == "" && env.getenv(operatorTokenEnv) == "") || (verb != "list" && id == "") {
		fs.Usage()
		return errUsage
	}
	cfg, log, st, err := openOperatorStore(ctx, env, f)
	if err != nil {
		return err
	}
	defer st.Close()
	operator, err := operatorPrincipal(ctx, env, f, cfg, st, *token, contracts.ScopeApprovalsWrite, *tenant)
	if err != nil {
		return err
	}
	var svc *gateway.Service
	if verb == "list" {
		svc = gateway.New(st, &gateway.Options{LeaseTTL: cfg.LeaseTTL()})
		defer svc.Close(ctx)
	} else {
		// Approving fires the approved move, which may call outside: the
		// service runs on the configuration's connections, as serve's.
		// Nothing runs in the background: the gateway is assembled for
		// its service alone.
		// With --dev its public URL is serve's (localTrust).
		if _, err := localTrust(f, cfg); err != nil {
			return err
		}
		gw, err := assembly.Build(ctx, cfg, st, &assembly.Options{Logger: log, Stderr: env.stderr, Getenv: env.getenv})
		if err != nil {
			return err
		}
		defer gw.Close(context.WithoutCancel(ctx))
		svc = gw.Service
	}
	if verb == "list" {
		if *status == "all" {
			*status = ""
		}
		list, err := svc.ListApprovals(ctx, operator, *status, 500)
		if err != nil {
			return err
		}
		if *format == "json" {
			return json.NewEncoder(env.stdout).Encode(list)
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tRUN\tTRANSITION\tQUEUE\tREQUESTED")
		for _, a := range list.Approvals {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Status, a.RunID, a.Transition, a.Queue, a.RequestedAt)
		}
		return tw.Flush()
	}
	res, err := svc.ResolveApproval(ctx, operator, id, verb == "approve", *note, "", "")
	if ce := (*contracts.Error)(nil); errors.As(err, &ce) && ce.Code == contracts.CodeInvalidTransition {
		if def := unconfiguredWorkflow(ctx, st, operator.Tenant, id, cfg); def != "" {
			// The command loaded another configuration than the gateway's.
			return fmt.Errorf("approval %s waits on a move of workflow %q, which the configuration of this command does not define.\n%s",
				id, def, f.findConfig().missing(f.dataDir))
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s %s: mission %s is now in state %s (%s)\n", id, res.Approval.Status, res.Approval.RunID,
		res.Mission.Workflow.State, res.Mission.Result.Status)
	return nil
}
