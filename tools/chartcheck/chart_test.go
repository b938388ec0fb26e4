package chartcheck

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// render runs helm template on the chart with args, and decodes the
// result strictly.
func render(t *testing.T, args ...string) *Objects {
	t.Helper()
	out, err := Helm(append([]string{"template", "praxa", ChartDir, "--namespace", "praxa"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(out)
	if err != nil {
		t.Fatalf("helm template %s: %v", strings.Join(args, " "), err)
	}
	return objs
}

var production = []string{"-f", ChartDir + "/values-production.yaml"}

// TestRenderedManifests: with the default values (one replica on SQLite)
// and the production values (three on PostgreSQL behind an external
// issuer), every manifest decodes strictly, and each says what the chart
// promises.
func TestRenderedManifests(t *testing.T) {
	for _, tc := range []struct {
		name      string
		args      []string
		replicas  int32
		postgres  bool
		monitor   bool
		issuerURL string
	}{
		{name: "default", replicas: 1},
		{name: "production", args: production, replicas: 3, postgres: true, monitor: true, issuerURL: "https://login.example.com/realms/praxa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := render(t, tc.args...)
			if len(o.Deployments) != 1 || len(o.Services) != 1 || len(o.ConfigMaps) != 1 || len(o.NetworkPolicies) != 1 {
				t.Fatalf("rendered %v", o.Kinds)
			}
			d, cm := o.Deployments[0], o.ConfigMaps[0]
			if *d.Spec.Replicas != tc.replicas {
				t.Errorf("replicas %d, want %d", *d.Spec.Replicas, tc.replicas)
			}
			pod := d.Spec.Template.Spec
			c := pod.Containers[0]
			checkSecurity(t, pod, c)
			checkProbes(t, c)

			// praxec.yaml is the ConfigMap's, and the pods carry its
			// checksum.
			cfg, ok := cm.Data["praxec.yaml"]
			if !ok {
				t.Fatalf("ConfigMap has no praxec.yaml: %v", cm.Data)
			}
			sum := sha256.Sum256([]byte(strings.TrimSuffix(cfg, "\n")))
			if got := d.Spec.Template.Annotations["checksum/config"]; got != hex.EncodeToString(sum[:]) {
				t.Errorf("checksum/config %q is not the sha256 of praxec.yaml (%x)", got, sum)
			}
			if !hasVolume(pod, "config", func(v corev1.Volume) bool { return v.ConfigMap != nil && v.ConfigMap.Name == cm.Name }) ||
				!hasMount(c, "config", "/etc/praxa") || envVar(c, "PRAXA_CONFIG") == nil || envVar(c, "PRAXA_CONFIG").Value != "/etc/praxa/praxec.yaml" {
				t.Errorf("praxec.yaml is not mounted from the ConfigMap and named by PRAXA_CONFIG (which every praxa command in the pod reads): env %v", c.Env)
			}
			if dd := envVar(c, "PRAXA_DATA_DIR"); dd == nil || dd.Value != "/data" || !hasMount(c, "data", "/data") {
				t.Errorf("PRAXA_DATA_DIR does not name the data volume's mount /data: %+v", dd)
			}
			if tc.issuerURL != "" && !strings.Contains(cfg, "issuer: "+tc.issuerURL) {
				t.Errorf("praxec.yaml does not trust %s:\n%s", tc.issuerURL, cfg)
			}

			// The store: PostgreSQL's DSN from a Secret, a rolling update
			// that keeps every replica; SQLite on its claim, recreated.
			store := envVar(c, "PRAXA_STORE")
			if tc.postgres {
				if store == nil || store.ValueFrom == nil || store.ValueFrom.SecretKeyRef == nil || store.Value != "" {
					t.Errorf("PRAXA_STORE is not read from a Secret: %+v", store)
				}
				if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0 {
					t.Errorf("strategy %+v, want a rolling update with maxUnavailable 0", d.Spec.Strategy)
				}
				if len(o.Claims) != 0 {
					t.Errorf("a PersistentVolumeClaim on PostgreSQL: %v", o.Kinds)
				}
			} else {
				if store != nil {
					t.Errorf("PRAXA_STORE set on SQLite: %+v", store)
				}
				if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
					t.Errorf("strategy %s on SQLite, want Recreate (one writer)", d.Spec.Strategy.Type)
				}
				if len(o.Claims) != 1 || !hasVolume(pod, "data", func(v corev1.Volume) bool {
					return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == o.Claims[0].Name
				}) {
					t.Errorf("/data is not the claim's: %v", o.Kinds)
				}
			}

			// A disruption budget exactly when there is more than one.
			if (len(o.DisruptionBudgets) == 1) != (tc.replicas > 1) {
				t.Errorf("%d PodDisruptionBudgets for %d replicas", len(o.DisruptionBudgets), tc.replicas)
			}
			for _, pdb := range o.DisruptionBudgets {
				if !selects(pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
					t.Errorf("the PodDisruptionBudget selects %v, not the pods %v", pdb.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
				}
			}

			svc := o.Services[0]
			if !selects(svc.Spec.Selector, d.Spec.Template.Labels) || svc.Spec.Ports[0].TargetPort.String() != "http" {
				t.Errorf("the Service does not reach the pods' http port: %+v", svc.Spec)
			}
			checkNetworkPolicy(t, o.NetworkPolicies[0], d, tc.postgres, tc.issuerURL != "")

			if (len(o.ServiceMonitors) == 1) != tc.monitor {
				t.Fatalf("%d ServiceMonitors, want one: %v", len(o.ServiceMonitors), tc.monitor)
			}
			for _, sm := range o.ServiceMonitors {
				if !selects(sm.Spec.Selector.MatchLabels, svc.Labels) || len(sm.Spec.Endpoints) != 1 ||
					sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
					t.Errorf("the ServiceMonitor does not scrape the Service's /metrics: %+v", sm.Spec)
				}
			}
		})
	}
}

// checkSecurity: the pod runs as the image's user (65532), on a read-only
// root filesystem, with no capabilities and no privilege escalation.
func checkSecurity(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	psc, sc := pod.SecurityContext, c.SecurityContext
	if psc == nil || sc == nil {
		t.Fatal("no security context")
	}
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser != 65532 ||
		psc.RunAsGroup == nil || *psc.RunAsGroup != 65532 || psc.FSGroup == nil || *psc.FSGroup != 65532 {
		t.Errorf("the pod does not run as the image's user 65532: %+v", psc)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("container security context %+v", sc)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the pod mounts a service account token it has no use for")
	}
}

// checkProbes: liveness on /healthz, readiness on /readyz, both on the
// port the gateway listens on.
func checkProbes(t *testing.T, c corev1.Container) {
	t.Helper()
	if len(c.Ports) != 1 || c.Ports[0].Name != "http" || !slices.Contains(c.Args, "0.0.0.0:8080") || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("the container does not listen on its http port 8080: args %v ports %+v", c.Args, c.Ports)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}, {"startup", c.StartupProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe %+v, want GET %s on http", p.name, p.probe, p.path)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v", c.Resources)
	}
}

// checkNetworkPolicy: the policy selects the pods, lets clients reach the
// http port, and lets the pods reach DNS, the issuer's port, the upstreams
// (443) and, on PostgreSQL, the database.
func checkNetworkPolicy(t *testing.T, np *networkingv1.NetworkPolicy, d *appsv1.Deployment, postgres, issuer bool) {
	t.Helper()
	if !selects(np.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("the NetworkPolicy selects %v, not the pods", np.Spec.PodSelector.MatchLabels)
	}
	if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
		t.Errorf("policy types %v", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].Ports) != 1 || np.Spec.Ingress[0].Ports[0].Port.String() != "http" {
		t.Errorf("ingress %+v, want the http port", np.Spec.Ingress)
	}
	egress := map[string]bool{}
	for _, r := range np.Spec.Egress {
		for _, p := range r.Ports {
			egress[string(*p.Protocol)+"/"+p.Port.String()] = true
		}
	}
	want := []string{"UDP/53", "TCP/53", "TCP/443"}
	if postgres {
		want = append(want, "TCP/5432")
	}
	for _, w := range want {
		if !egress[w] {
			t.Errorf("egress does not allow %s: %v", w, egress)
		}
	}
	if issuer {
		// One rule names the issuer's port alone (the IdP's rule).
		found := false
		for _, r := range np.Spec.Egress {
			found = found || (len(r.Ports) == 1 && r.Ports[0].Port.String() == "443" && len(r.To) > 0)
		}
		if !found {
			t.Errorf("no egress rule to the issuer's port 443: %+v", np.Spec.Egress)
		}
	}
}

// TestRefusedAtRender: values that cannot run are refused with the fix.
func TestRefusedAtRender(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "replicaCount=3"}, "replicaCount 3 on store.type sqlite: a SQLite store has one writer"},
		{[]string{"--set", "store.type=postgres"}, "store.type postgres needs store.postgres.existingSecret"},
		{[]string{"--set", "store.type=mysql"}, "value must be one of 'sqlite', 'postgres'"},
		{[]string{"--set", "store.type=mysql", "--skip-schema-validation"}, `store.type "mysql" is not a store`},
		// values.schema.json: a misspelt value is an error.
		{[]string{"--set", "replicas=3"}, "additional properties 'replicas' not allowed"},
		{[]string{"--set", "networkPolicy.egress=[]"}, "additional properties 'egress' not allowed"},
		{append(slices.Clone(production), "--set", "store.type=sqlite"), "replicaCount 3 on store.type sqlite"},
	} {
		_, err := Helm(append([]string{"template", "praxa", ChartDir}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("helm template %v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestConfigChangeRollsPods: a change of praxec.yaml changes the pods'
// checksum/config annotation (so the Deployment rolls them); a change
// elsewhere does not.
func TestConfigChangeRollsPods(t *testing.T) {
	sum := func(args ...string) string {
		return render(t, append(slices.Clone(production), args...)...).Deployments[0].Spec.Template.Annotations["checksum/config"]
	}
	base := sum()
	if sum("--set", "config.server.limits.requestTimeout=10s") == base {
		t.Error("a new requestTimeout left checksum/config as it was")
	}
	if sum("--set", "oidc.issuer=https://other.example.com") == base {
		t.Error("a new issuer left checksum/config as it was")
	}
	if sum("--set", "resources.limits.memory=2Gi") != base {
		t.Error("a change outside praxec.yaml changed checksum/config")
	}
}

// TestRenderedConfigValidates: each rendering's praxec.yaml passes praxa
// config validate ($PRAXA_BIN, else a praxa built from the checkout).
func TestRenderedConfigValidates(t *testing.T) {
	bin := os.Getenv("PRAXA_BIN")
	if bin == "" {
		if testing.Short() {
			t.Skip("builds praxa; skipped in -short (set PRAXA_BIN to a built one)")
		}
		bin = filepath.Join(t.TempDir(), "praxa")
		if out, err := exec.Command("go", "build", "-C", "../..", "-o", bin, "./cmd/praxa").CombinedOutput(); err != nil {
			t.Fatalf("go build praxa: %v\n%s", err, out)
		}
	}
	for name, args := range map[string][]string{"default": nil, "production": production} {
		cfg := render(t, args...).ConfigMaps[0].Data["praxec.yaml"]
		file := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "config", "validate", file)
		cmd.Env = append(os.Environ(), "PRAXA_REQUEST_STATE_KEY=an-example-key-of-at-least-32-bytes-long")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: praxa config validate: %v\n%s\n%s", name, err, out, cfg)
		}
	}
}

func envVar(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func hasVolume(pod corev1.PodSpec, name string, ok func(corev1.Volume) bool) bool {
	for _, v := range pod.Volumes {
		if v.Name == name {
			return ok(v)
		}
	}
	return false
}

func hasMount(c corev1.Container, name, path string) bool {
	for _, m := range c.VolumeMounts {
		if m.Name == name && m.MountPath == path {
			return true
		}
	}
	return false
}

// selects reports whether every label of selector is one of labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
