package chartcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// ChartDir is the chart, relative to this module.
const ChartDir = "../../deploy/helm/praxa"

// Helm runs Helm v4 with args in this module's directory: $HELM when set,
// else the tools/helm module's helm through go tool (built once, then
// cached).
func Helm(args ...string) ([]byte, error) { return HelmIn("", args...) }

// HelmIn is Helm run in the directory dir ("": this module's).
func HelmIn(dir string, args ...string) ([]byte, error) {
	var cmd *exec.Cmd
	if h := os.Getenv("HELM"); h != "" {
		cmd = exec.Command(h, args...)
	} else {
		modfile, err := filepath.Abs("../helm/go.mod")
		if err != nil {
			return nil, err
		}
		cmd = exec.Command("go", append([]string{"tool", "-modfile=" + modfile, "helm"}, args...)...)
	}
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Objects are the manifests of one rendering, decoded.
type Objects struct {
	Deployments       []*appsv1.Deployment
	Services          []*corev1.Service
	ConfigMaps        []*corev1.ConfigMap
	ServiceAccounts   []*corev1.ServiceAccount
	Claims            []*corev1.PersistentVolumeClaim
	DisruptionBudgets []*policyv1.PodDisruptionBudget
	NetworkPolicies   []*networkingv1.NetworkPolicy
	ServiceMonitors   []*monitoringv1.ServiceMonitor
	Kinds             []string // apiVersion/kind of each, in order
}

// Decode splits the output of helm template into its documents and
// decodes each strictly into the type of its apiVersion and kind: a
// duplicate key, a field the type does not have, or a kind the chart is
// not known to render is an error.
func Decode(rendered []byte) (*Objects, error) {
	objs := &Objects{}
	for i, doc := range splitDocuments(rendered) {
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if string(js) == "null" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(js, &head); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		gvk := head.APIVersion + "/" + head.Kind
		add, ok := kinds[gvk]
		if !ok {
			return nil, fmt.Errorf("document %d: %s is not a kind the chart is known to render (add its type to kinds)", i, gvk)
		}
		target := add(objs)
		if err := strictJSON(js, target); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, gvk, err)
		}
		objs.Kinds = append(objs.Kinds, gvk)
	}
	return objs, nil
}

// kinds maps each apiVersion/kind the chart renders to the list its
// objects decode into.
var kinds = map[string]func(*Objects) any{
	"apps/v1/Deployment":                      func(o *Objects) any { return appendNew(&o.Deployments) },
	"v1/Service":                              func(o *Objects) any { return appendNew(&o.Services) },
	"v1/ConfigMap":                            func(o *Objects) any { return appendNew(&o.ConfigMaps) },
	"v1/ServiceAccount":                       func(o *Objects) any { return appendNew(&o.ServiceAccounts) },
	"v1/PersistentVolumeClaim":                func(o *Objects) any { return appendNew(&o.Claims) },
	"policy/v1/PodDisruptionBudget":           func(o *Objects) any { return appendNew(&o.DisruptionBudgets) },
	"networking.k8s.io/v1/NetworkPolicy":      func(o *Objects) any { return appendNew(&o.NetworkPolicies) },
	"monitoring.coreos.com/v1/ServiceMonitor": func(o *Objects) any { return appendNew(&o.ServiceMonitors) },
}

// appendNew appends a new zero *T to *list and returns it.
func appendNew[T any](list *[]*T) *T {
	v := new(T)
	*list = append(*list, v)
	return v
}

// strictJSON decodes one JSON value into v, refusing unknown fields and
// anything after the value.
func strictJSON(js []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one value")
	}
	return nil
}

// splitDocuments splits a YAML stream at its "---" lines.
func splitDocuments(b []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	for line := range bytes.Lines(b) {
		if t := bytes.TrimRight(line, " \r\n"); bytes.Equal(t, []byte("---")) {
			docs = append(docs, cur)
			cur = nil
			continue
		}
		cur = append(cur, line...)
	}
	return append(docs, cur)
}
