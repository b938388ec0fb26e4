package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/knowledge"
)

// This file holds the context commands (praxa memory import, praxa goals
// import, praxa certificates import) and what serve needs of the skills,
// the certificate issuers and the demo context claims of --dev.

func init() {
	register(command{name: "memory", summary: "import memory records (JSON Lines) for one tenant: memory import FILE --tenant T", run: runMemory, verbs: []string{"import"}})
	register(command{name: "goals", summary: "import context goals (JSON Lines) for one tenant: goals import FILE --tenant T", run: runGoals, verbs: []string{"import"}})
	register(command{name: "certificates", summary: "import model capability certificates (gateway-wide): certificates import FILE", run: runCertificates, verbs: []string{"import"}})
}

// The compartment and purpose the token serve --dev prints allows: those of
// the example data (examples/memory.jsonl and examples/goals.jsonl).
var (
	devCompartments = []string{"payments"}
	devPurposes     = []string{"incident-review"}
)

// contextClaims returns the claims that allow compartments and purposes,
// under the names the gateway reads them from.
func contextClaims(compartmentsClaim, purposesClaim string, compartments, purposes []string) map[string]any {
	extra := map[string]any{}
	compartmentsClaim = cmp.Or(compartmentsClaim, "compartments")
	purposesClaim = cmp.Or(purposesClaim, "purposes")
	if len(compartments) > 0 {
		extra[compartmentsClaim] = compartments
	}
	if len(purposes) > 0 {
		extra[purposesClaim] = purposes
	}
	return extra
}

var claimValueRE = regexp.MustCompile(contracts.IdentifierPattern)

// commaList splits a comma-separated flag value; every item must be an
// identifier (what the context tools accept as a compartment or purpose).
func commaList(env *environment, cmd, flagName, v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []string
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if !claimValueRE.MatchString(item) {
			fmt.Fprintf(env.stderr, "praxa %s: --%s: %q is not an identifier (1 to 128 letters, digits, '.', '_', ':' or '-')\n", cmd, flagName, item)
			return nil, errUsage
		}
		out = append(out, item)
	}
	return out, nil
}

// openInput opens FILE, or standard input for "-".
func openInput(env *environment, name string) (io.Reader, func(), error) {
	if name == "-" {
		return env.stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// printReport prints what an import did.
func printReport(env *environment, what string, rep knowledge.ImportReport, format string) error {
	if format == "json" {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	where := ""
	if rep.Tenant != "" {
		where = " into tenant " + rep.Tenant
	}
	fmt.Fprintf(env.stdout, "%s: imported %s%s: %d added, %d updated, %d unchanged (audit trace %s)\n",
		rep.File, what, where, rep.Added, rep.Updated, rep.Unchanged, rep.TraceID)
	for _, it := range rep.Items {
		if it.Verification != "" {
			fmt.Fprintf(env.stdout, "  line %d: %s %s (%s)\n", it.Line, it.ID, it.Outcome, it.Verification)
		} else {
			fmt.Fprintf(env.stdout, "  line %d: %s %s\n", it.Line, it.ID, it.Outcome)
		}
	}
	return nil
}

// importCommand runs "praxa NOUN import FILE ...".
func importCommand(ctx context.Context, env *environment, args []string, noun string, tenanted bool,
	do func(ctx context.Context, k *knowledge.Knowledge, by *auth.Principal, tenant, name string, r io.Reader) (knowledge.ImportReport, error)) error {
	synopsis := "import FILE"
	if tenanted {
		synopsis = "import FILE --tenant T"
	}
	fs := newFlagSet(env, noun, synopsis)
	tenant := new(string)
	if tenanted {
		fs.StringVar(tenant, "tenant", "", "tenant whose records to import (required)")
	}
	format := fs.String("format", "text", "text or json")
	var f serveFlags
	fs.StringVar(&f.dataDir, "data-dir", defaultDataDir(env), "directory of the gateway's state (also PRAXA_DATA_DIR)")
	storeVar(fs, &f.store, env, storeUsage)
	if !tenanted {
		fs.StringVar(&f.config, "config", env.getenv(configEnv), "configuration `FILE` naming the trusted certificate issuers (default $"+configEnv+", else ./praxec.yaml when it exists; with --dev and none, the embedded examples/praxec.yaml)")
		fs.BoolVar(&f.dev, "dev", false, "without --config and ./praxec.yaml, verify against the embedded example configuration")
	} else {
		fs.StringVar(&f.config, "config", env.getenv(configEnv), "configuration `FILE` naming the tenant quotas (server.quotas; default $"+configEnv+", else ./praxec.yaml when it exists)")
	}
	if len(args) == 0 || args[0] != "import" {
		return verbUsage(fs, args)
	}
	// FILE may come before, between or after the flags.
	rest := args[1:]
	var files []string
	for {
		if len(rest) > 0 && (!strings.HasPrefix(rest[0], "-") || rest[0] == "-") {
			files, rest = append(files, rest[0]), rest[1:]
			continue
		}
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if rest = fs.Args(); len(rest) == 0 {
			break
		}
	}
	file := ""
	if len(files) == 1 {
		file = files[0]
	}
	if file == "" || (tenanted && *tenant == "") || (*format != "text" && *format != "json") {
		fs.Usage()
		return errUsage
	}
	var opts gateway.Options
	var kopts knowledge.Options
	cfg, err := f.findConfig().load()
	if err != nil {
		return err
	}
	if tenanted {
		opts.Quotas = cfg.Server.Quotas
	} else if kopts.CertificateIssuers, err = knowledge.CertificateIssuers(cfg.Certificates); err != nil {
		return err
	}
	r, closeInput, err := openInput(env, file)
	if err != nil {
		return err
	}
	defer closeInput()
	if err := os.MkdirAll(f.dataDir, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	// The import is the operating-system user's (operator.go); its
	// audit event reaches the configured audit.sink too.
	by, err := osOperator(*tenant)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := openAuditedStore(ctx, f, cfg, env.stderr, log)
	if err != nil {
		return err
	}
	defer st.Close()
	// The service holds the tenant quotas the import is checked against.
	svc := gateway.New(st, &opts)
	defer svc.Close(ctx)
	kopts.Quota = svc
	rep, err := do(ctx, knowledge.New(st, &kopts), by, *tenant, file, r)
	if err != nil {
		return err
	}
	return printReport(env, noun, rep, *format)
}

// runMemory imports memory records: praxa memory import FILE --tenant T.
func runMemory(ctx context.Context, env *environment, args []string) error {
	return importCommand(ctx, env, args, "memory", true, func(ctx context.Context, k *knowledge.Knowledge, by *auth.Principal, tenant, name string, r io.Reader) (knowledge.ImportReport, error) {
		return k.ImportMemory(ctx, by, tenant, name, r)
	})
}

// runGoals imports goals: praxa goals import FILE --tenant T.
func runGoals(ctx context.Context, env *environment, args []string) error {
	return importCommand(ctx, env, args, "goals", true, func(ctx context.Context, k *knowledge.Knowledge, by *auth.Principal, tenant, name string, r io.Reader) (knowledge.ImportReport, error) {
		return k.ImportGoals(ctx, by, tenant, name, r)
	})
}

// runCertificates imports certificates, gateway-wide: praxa certificates
// import FILE. The configuration (--config) names the trusted issuers the
// report verifies each certificate against; the gateway verifies them again
// whenever it lists them.
func runCertificates(ctx context.Context, env *environment, args []string) error {
	return importCommand(ctx, env, args, "certificates", false, func(ctx context.Context, k *knowledge.Knowledge, by *auth.Principal, _, name string, r io.Reader) (knowledge.ImportReport, error) {
		return k.ImportCertificates(ctx, by, name, r)
	})
}
