{{/*
Names. The full name is short enough for every suffix the chart adds ("-dns-server", "-network-calico") to stay a
valid Service name (63 characters).
*/}}
{{- define "gardener-ipv6.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 40 | trimSuffix "-" }}
{{- end }}

{{- define "gardener-ipv6.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of a component's objects: <fullname>-<component>. Call with (list $ "gardenlet"). */}}
{{- define "gardener-ipv6.componentName" -}}
{{- printf "%s-%s" (include "gardener-ipv6.fullname" (index . 0)) (index . 1) }}
{{- end }}

{{- define "gardener-ipv6.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "gardener-ipv6.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select one component's pods. Call with (list $ "gardenlet"). */}}
{{- define "gardener-ipv6.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gardener-ipv6.name" (index . 0) }}
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "gardener-ipv6.componentLabels" -}}
{{ include "gardener-ipv6.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "gardener-ipv6.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "gardener-ipv6.leaderElectionNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{/* `--feature-gates` value: the gates set in the values, sorted (DualStack=false,IPv6SingleStack=true). */}}
{{- define "gardener-ipv6.featureGates" -}}
{{- $gates := list }}
{{- range $name := keys .Values.featureGates | sortAlpha }}
{{- $gates = append $gates (printf "%s=%t" $name (index $.Values.featureGates $name)) }}
{{- end }}
{{- join "," $gates }}
{{- end }}

{{/* The `ipFamilyPolicy` and `ipFamilies` of every Service of the chart. */}}
{{- define "gardener-ipv6.serviceIPFamilies" -}}
ipFamilyPolicy: {{ .Values.service.ipFamilyPolicy }}
{{- with .Values.service.ipFamilies }}
ipFamilies:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Whether IPv4 may be among the Services' families (listed, or left to the cluster). */}}
{{- define "gardener-ipv6.mayServeIPv4" -}}
{{- if or (has "IPv4" .Values.service.ipFamilies) (empty .Values.service.ipFamilies) }}true{{ end }}
{{- end }}

{{/* HOST:PORT the DNS records are published to. */}}
{{- define "gardener-ipv6.dnsServerAddress" -}}
{{- if .Values.dns.server }}
{{- .Values.dns.server }}
{{- else if .Values.dnsServer.enabled }}
{{- printf "%s.%s.svc:53" (include "gardener-ipv6.componentName" (list . "dns-server")) .Release.Namespace }}
{{- else }}
{{- fail "dns.server is empty and dnsServer.enabled is false: set dns.server to the HOST:PORT of a DNS server that accepts RFC 2136 updates, or enable the chart's own (dnsServer.enabled=true)" }}
{{- end }}
{{- end }}

{{/* Name of the Secret with the TSIG key, empty when updates are not signed. */}}
{{- define "gardener-ipv6.tsigSecretName" -}}
{{- if or .Values.dnsServer.enabled .Values.dns.tsig.secret }}
{{- include "gardener-ipv6.componentName" (list . "dns-tsig") }}
{{- end }}
{{- end }}

{{/*
The TSIG key (base64): from the values, else the one stored by an earlier release, else new. Cached for the render,
so the gardenlet and the DNS server get the same one.
*/}}
{{- define "gardener-ipv6.tsigSecret" -}}
{{- if not (hasKey .Values.dns.tsig "__resolved") }}
{{- $secret := .Values.dns.tsig.secret }}
{{- if not $secret }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "gardener-ipv6.componentName" (list . "dns-tsig")) }}
{{- if and $existing $existing.data $existing.data.secret }}
{{- $secret = b64dec $existing.data.secret }}
{{- else }}
{{- $secret = randBytes 32 }}
{{- end }}
{{- end }}
{{- $_ := set .Values.dns.tsig "__resolved" $secret }}
{{- end }}
{{- index .Values.dns.tsig "__resolved" }}
{{- end }}

{{/*
The webhook's CA, certificate and key as JSON: from the values, else those of an earlier release (same Service
names), else generated. Cached for the render, so the Secret and the caBundle of the configurations agree.
*/}}
{{- define "gardener-ipv6.webhookTLS" -}}
{{- if not (hasKey .Values.webhook.certificate "__resolved") }}
{{- $c := .Values.webhook.certificate }}
{{- $secretName := include "gardener-ipv6.componentName" (list . "admission-tls") }}
{{- $service := include "gardener-ipv6.componentName" (list . "admission") }}
{{- $tls := dict }}
{{- if or $c.caCert $c.cert $c.key }}
{{- if not (and $c.caCert $c.cert $c.key) }}
{{- fail "webhook.certificate: give caCert, cert and key together, or none of them to have the chart generate them" }}
{{- end }}
{{- $tls = dict "ca" $c.caCert "cert" $c.cert "key" $c.key }}
{{- else }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $secretName }}
{{- if and $existing $existing.data (index $existing.data "ca.crt") (eq (index $existing.metadata.annotations "gardener-ipv6.gardener.cloud/service") $service) }}
{{- $tls = dict "ca" (b64dec (index $existing.data "ca.crt")) "cert" (b64dec (index $existing.data "tls.crt")) "key" (b64dec (index $existing.data "tls.key")) }}
{{- else }}
{{- $names := list $service (printf "%s.%s" $service .Release.Namespace) (printf "%s.%s.svc" $service .Release.Namespace) (printf "%s.%s.svc.cluster.local" $service .Release.Namespace) }}
{{- $ca := genCA (printf "%s-webhook-ca" (include "gardener-ipv6.fullname" .)) (int $c.validityDays) }}
{{- $cert := genSignedCert (index $names 2) nil $names (int $c.validityDays) $ca }}
{{- $tls = dict "ca" $ca.Cert "cert" $cert.Cert "key" $cert.Key }}
{{- end }}
{{- end }}
{{- $_ := set .Values.webhook.certificate "__resolved" $tls }}
{{- end }}
{{- toJson (index .Values.webhook.certificate "__resolved") }}
{{- end }}

{{/* Pod-level settings shared by every component. Call with (list $ .Values.<component>). */}}
{{- define "gardener-ipv6.podSpecCommon" -}}
{{- $ := index . 0 }}
{{- $component := index . 1 }}
{{- with $.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $.Values.podSecurityContext | nindent 2 }}
{{- with $component.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $component.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $component.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The `gardener-ipv6 run` arguments every component takes: which component, feature gates, health endpoint (on `::`,
which takes IPv6 and, where the pod has it, IPv4), log level. Call with (list $ "gardenlet").
Arguments with values are quoted: YAML reads a plain `- --health-host=::` (a colon at the end) as a mapping.
*/}}
{{- define "gardener-ipv6.runArgs" -}}
{{- $ := index . 0 }}
- run
- {{ printf "--components=%v" (index . 1) | quote }}
- {{ printf "--feature-gates=%v" (include "gardener-ipv6.featureGates" $) | quote }}
- "--health-host=::"
- {{ printf "--health-port=%v" ($.Values.healthPort) | quote }}
- {{ printf "--log-level=%v" ($.Values.logLevel) | quote }}
{{- end }}

{{/* Leader election arguments of a controller component. Call with (list $ "gardenlet"). */}}
{{- define "gardener-ipv6.leaderElectionArgs" -}}
{{- $ := index . 0 }}
{{- if $.Values.leaderElection.enabled }}
- --leader-elect
- {{ printf "--leader-election-namespace=%v" (include "gardener-ipv6.leaderElectionNamespace" $) | quote }}
- {{ printf "--leader-election-id=%v" (include "gardener-ipv6.componentName" (list $ (index . 1))) | quote }}
{{- end }}
{{- end }}

{{/* Container settings shared by every component: image, health port, probes, security context. */}}
{{- define "gardener-ipv6.containerCommon" -}}
{{- $ := index . 0 }}
{{- $component := index . 1 }}
image: {{ include "gardener-ipv6.image" $ }}
imagePullPolicy: {{ $.Values.image.pullPolicy }}
env:
  - name: GARDENER_IPV6_TMPDIR
    value: /tmp
livenessProbe:
  httpGet:
    path: /healthz
    port: health
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /readyz
    port: health
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
startupProbe:
  httpGet:
    path: /healthz
    port: health
  periodSeconds: 2
  failureThreshold: 60
{{- with $component.resources }}
resources:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml $.Values.containerSecurityContext | nindent 2 }}
{{- end }}

{{/* RoleBinding of the leader election Role for a component's ServiceAccount. Call with (list $ "gardenlet"). */}}
{{- define "gardener-ipv6.leaderElectionRBAC" -}}
{{- $ := index . 0 }}
{{- $name := include "gardener-ipv6.componentName" (list $ (index . 1)) }}
{{- if $.Values.leaderElection.enabled }}
---
# Leader election: create the Lease, then read and renew only this one.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $name }}-leader-election
  namespace: {{ include "gardener-ipv6.leaderElectionNamespace" $ }}
  labels:
    {{- include "gardener-ipv6.componentLabels" . | nindent 4 }}
rules:
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["create"]
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    resourceNames: [{{ $name | quote }}]
    verbs: ["get", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $name }}-leader-election
  namespace: {{ include "gardener-ipv6.leaderElectionNamespace" $ }}
  labels:
    {{- include "gardener-ipv6.componentLabels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $name }}-leader-election
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $.Release.Namespace }}
{{- end }}
{{- end }}

{{/* ServiceAccount, ClusterRole (rules given as YAML) and ClusterRoleBinding of a component. */}}
{{- define "gardener-ipv6.componentRBAC" -}}
{{- $ := index . 0 }}
{{- $component := index . 1 }}
{{- $name := include "gardener-ipv6.componentName" (list $ $component) }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $name }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "gardener-ipv6.componentLabels" (list $ $component) | nindent 4 }}
automountServiceAccountToken: true
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $name }}
  labels:
    {{- include "gardener-ipv6.componentLabels" (list $ $component) | nindent 4 }}
rules:
  {{- index . 2 | trim | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $name }}
  labels:
    {{- include "gardener-ipv6.componentLabels" (list $ $component) | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $name }}
subjects:
  - kind: ServiceAccount
    name: {{ $name }}
    namespace: {{ $.Release.Namespace }}
{{- end }}

{{/* The metrics Service of a controller component. Call with (list $ "gardenlet"). */}}
{{- define "gardener-ipv6.metricsService" -}}
{{- $ := index . 0 }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "gardener-ipv6.componentName" . }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "gardener-ipv6.componentLabels" . | nindent 4 }}
spec:
  type: ClusterIP
  {{- include "gardener-ipv6.serviceIPFamilies" $ | nindent 2 }}
  selector:
    {{- include "gardener-ipv6.selectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: {{ $.Values.healthPort }}
      targetPort: health
      protocol: TCP
{{- end }}

{{/* What both webhooks share; the rules match src/admission/webhook-configurations.ts. */}}
{{- define "gardener-ipv6.webhookCommon" -}}
admissionReviewVersions: ["v1"]
failurePolicy: {{ .Values.webhook.failurePolicy }}
matchPolicy: Equivalent
{{- with .Values.webhook.namespaceSelector }}
namespaceSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.webhook.objectSelector }}
objectSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
# Main resources only: status updates are not the webhook's to judge.
rules:
  - apiGroups: ["core.gardener.cloud"]
    apiVersions: ["v1beta1"]
    resources: ["shoots", "seeds", "cloudprofiles"]
    operations: ["CREATE", "UPDATE"]
    scope: "*"
  - apiGroups: ["extensions.gardener.cloud"]
    apiVersions: ["v1alpha1"]
    resources: ["networks", "dnsrecords"]
    operations: ["CREATE", "UPDATE"]
    scope: "*"
sideEffects: None
timeoutSeconds: {{ .Values.webhook.timeoutSeconds }}
{{- end }}

{{/*
Deployment of a controller component (network, dns, scheduler): run args, leader election, health port.
Call with (list $ "network-calico" "network" .Values.networkExtension).
*/}}
{{- define "gardener-ipv6.extensionDeployment" -}}
{{- $ := index . 0 }}
{{- $component := index . 1 }}
{{- $runComponent := index . 2 }}
{{- $values := index . 3 }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "gardener-ipv6.componentName" (list $ $component) }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "gardener-ipv6.componentLabels" (list $ $component) | nindent 4 }}
spec:
  replicas: {{ $values.replicas }}
  selector:
    matchLabels:
      {{- include "gardener-ipv6.selectorLabels" (list $ $component) | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "gardener-ipv6.selectorLabels" (list $ $component) | nindent 8 }}
      {{- with $values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ include "gardener-ipv6.componentName" (list $ $component) }}
      {{- include "gardener-ipv6.podSpecCommon" (list $ $values) | trim | nindent 6 }}
      containers:
        - name: {{ $component }}
          {{- include "gardener-ipv6.containerCommon" (list $ $values) | trim | nindent 10 }}
          args:
            {{- include "gardener-ipv6.runArgs" (list $ $runComponent) | trim | nindent 12 }}
            {{- include "gardener-ipv6.leaderElectionArgs" (list $ $component) | trim | nindent 12 }}
          ports:
            - name: health
              containerPort: {{ $.Values.healthPort }}
              protocol: TCP
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir: {}
{{- end }}

{{/*
Whether a component of the garden itself (admission, scheduler) is installed: enabled, and the garden is this cluster
(garden.kubeconfigSecret empty). Call with (list $ "admission"); empty when not.
*/}}
{{- define "gardener-ipv6.gardenComponent" -}}
{{- $ := index . 0 }}
{{- if and (index $.Values (index . 1)).enabled (not $.Values.garden.kubeconfigSecret) }}true{{ end }}
{{- end }}

{{/*
Fails unless the values of a seed's install (garden.kubeconfigSecret) name the seed, and unless seedConfig names the
Seed seedName names.
*/}}
{{- define "gardener-ipv6.checkSeedValues" -}}
{{- $configured := "" }}
{{- with .Values.seedConfig }}{{- with .metadata }}{{- $configured = .name | default "" }}{{- end }}{{- end }}
{{- if and .Values.seedConfig (not $configured) }}
{{- fail "seedConfig has no metadata.name: give the Seed its name" }}
{{- end }}
{{- if and .Values.seedName $configured (ne .Values.seedName $configured) }}
{{- fail (printf "seedConfig names the Seed %q and seedName is %q: give one name" $configured .Values.seedName) }}
{{- end }}
{{- if and .Values.garden.kubeconfigSecret (not .Values.seedName) (not $configured) }}
{{- fail "garden.kubeconfigSecret is set and seedName is empty: a gardenlet in a seed cluster serves one Seed, set seedName (or seedConfig) to its name" }}
{{- end }}
{{- end }}
