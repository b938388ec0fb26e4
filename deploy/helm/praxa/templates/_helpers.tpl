{{/* The chart's name, and the release's full name (63 characters at most). */}}
{{- define "praxa.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "praxa.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "praxa.selectorLabels" -}}
app.kubernetes.io/name: {{ include "praxa.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "praxa.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "praxa.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "praxa.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "praxa.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The URL clients reach the gateway at. */}}
{{- define "praxa.publicURL" -}}
{{- .Values.publicURL | default (printf "http://%s.%s.svc:%v" (include "praxa.fullname" .) .Release.Namespace .Values.service.port) | trimSuffix "/" -}}
{{- end -}}

{{/*
praxa.validate refuses, at render, the values that cannot run: several
replicas on SQLite (one file, one writer), PostgreSQL without the Secret of
its DSN, an unknown store type.
*/}}
{{- define "praxa.validate" -}}
{{- if not (has .Values.store.type (list "sqlite" "postgres")) -}}
{{- fail (printf "store.type %q is not a store: use sqlite (one replica) or postgres (several replicas)" (toString .Values.store.type)) -}}
{{- end -}}
{{- if and (eq .Values.store.type "sqlite") (gt (int .Values.replicaCount) 1) -}}
{{- fail (printf "replicaCount %d on store.type sqlite: a SQLite store has one writer, so it holds one replica; set store.type postgres and store.postgres.existingSecret (a Secret holding the postgres:// DSN), or replicaCount 1" (int .Values.replicaCount)) -}}
{{- end -}}
{{- if and (eq .Values.store.type "postgres") (not .Values.store.postgres.existingSecret) -}}
{{- fail "store.type postgres needs store.postgres.existingSecret: the name of a Secret whose key store.postgres.key (default dsn) holds the postgres:// DSN" -}}
{{- end -}}
{{- end -}}

{{/*
praxa.config is praxec.yaml: .Values.config with server.publicURL,
auth.resource and auth.issuers set from publicURL and oidc, and the
request-state key read from the environment when its Secret is named.
*/}}
{{- define "praxa.config" -}}
{{- $cfg := deepCopy (.Values.config | default dict) -}}
{{- $server := get $cfg "server" | default dict -}}
{{- $_ := set $server "publicURL" (include "praxa.publicURL" .) -}}
{{- if .Values.requestState.existingSecret -}}
{{- $_ := set $server "requestStateKeys" (list "${PRAXA_REQUEST_STATE_KEY}") -}}
{{- end -}}
{{- $_ := set $cfg "server" $server -}}
{{- $auth := get $cfg "auth" | default dict -}}
{{- $_ := set $auth "resource" (.Values.oidc.audience | default (get $auth "resource") | default (include "praxa.publicURL" .)) -}}
{{- if .Values.oidc.issuer -}}
{{- $issuers := list (dict "issuer" .Values.oidc.issuer) -}}
{{- range (get $auth "issuers" | default list) -}}
{{- if ne .issuer $.Values.oidc.issuer -}}
{{- $issuers = append $issuers . -}}
{{- end -}}
{{- end -}}
{{- $_ := set $auth "issuers" $issuers -}}
{{- end -}}
{{- $_ := set $cfg "auth" $auth -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/*
praxa.issuerPorts lists, once each, the ports of every issuer praxec.yaml
trusts (oidc.port, when set, for oidc.issuer): the NetworkPolicy opens them
to networkPolicy.idp.to.
*/}}
{{- define "praxa.issuerPorts" -}}
{{- $cfg := include "praxa.config" . | fromYaml -}}
{{- $ports := list -}}
{{- range (dig "auth" "issuers" list $cfg) -}}
{{- $port := "" -}}
{{- if and $.Values.oidc.port (eq .issuer $.Values.oidc.issuer) -}}
{{- $port = toString $.Values.oidc.port -}}
{{- else -}}
{{- $u := urlParse .issuer -}}
{{- $hostport := splitList ":" $u.host -}}
{{- if gt (len $hostport) 1 -}}
{{- $port = last $hostport -}}
{{- else if eq $u.scheme "http" -}}
{{- $port = "80" -}}
{{- else -}}
{{- $port = "443" -}}
{{- end -}}
{{- end -}}
{{- $ports = append $ports $port -}}
{{- end -}}
{{- $ports | uniq | join "," -}}
{{- end -}}
