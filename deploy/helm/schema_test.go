package helm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// schemaError starts every error of Helm's values.schema.json validation.
const schemaError = "values don't meet the specifications of the schema(s)"

// minimalValues are the fewest values the chart renders with: a project and
// credentials.
const minimalValues = "api: {projectId: p1, url: https://api.example.net/v1}\ncredentials: {existingSecret: c}\n"

// TestSchemaRefusesBadValues: values.schema.json refuses a misspelt key, a
// wrong type and a value the chart does not accept before anything
// renders, with an error naming the key (as a JSON pointer), where the
// templates alone would render a broken or silently different object.
func TestSchemaRefusesBadValues(t *testing.T) {
	for _, tc := range []struct{ name, values, want string }{
		// Misspelt keys: without the schema, silently ignored.
		{"typo top level", "serviceMonitr: {enabled: true}", "at '': additional properties 'serviceMonitr' not allowed"},
		{"typo admin", "admin: {enabeld: true}", "at '/admin': additional properties 'enabeld' not allowed"},
		{"typo serviceMonitor", "serviceMonitor: {enabled: true, intreval: 1m}", "at '/serviceMonitor': additional properties 'intreval' not allowed"},
		{"typo podMonitor", "podMonitor: {scrapeTimout: 5s}", "at '/podMonitor': additional properties 'scrapeTimout' not allowed"},
		{"typo nested", "admin: {tokenSecret: {nmae: t}}", "at '/admin/tokenSecret': additional properties 'nmae' not allowed"}, //nolint:misspell // the typo is the test case
		{"typo pdb", "podDisruptionBudget: {enabled: true, minAvailble: 1}", "at '/podDisruptionBudget': additional properties 'minAvailble' not allowed"},

		// Wrong types.
		{"string port", `service: {port: "9866"}`, "at '/service/port': got string, want integer"},
		{"string replicas", `replicaCount: "1"`, "at '/replicaCount': got string, want integer"},
		{"fractional replicas", "replicaCount: 1.5", "at '/replicaCount': got number, want integer"},
		{"string boolean", `serviceMonitor: {enabled: "true"}`, "at '/serviceMonitor/enabled': got string, want boolean"},
		{"numeric tag", "image: {tag: 1.10}", "at '/image/tag': got number, want string"},
		{"numeric label", "podLabels: {tier: 1}", "at '/podLabels/tier': got number, want string"},
		{"numeric dashboard label", "grafanaDashboards: {labels: {grafana_dashboard: 1}}", "at '/grafanaDashboards/labels/grafana_dashboard': got number, want string"},
		{"map for a list", "extraArgs: {interval: 2m}", "at '/extraArgs': got object, want array"},
		{"string for a map", "resources: 128Mi", "at '/resources': got string, want object"},
		{"numeric interval", "serviceMonitor: {interval: 30}", "at '/serviceMonitor/interval': got number, want string"},
		{"env without a name", "env: [{value: x}]", "at '/env/0': missing property 'name'"},

		// Values the chart does not accept.
		{"pull policy", "image: {pullPolicy: always}", "at '/image/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'"},
		{"service type", "service: {type: Ingress}", "at '/service/type': value must be one of 'ClusterIP', 'NodePort', 'LoadBalancer'"},
		{"admin service type", "admin: {service: {type: ExternalName}}", "at '/admin/service/type': value must be one of"},
		{"admin operation", "admin: {allow: [resizeservice]}", "at '/admin/allow/0': value must be one of 'createService'"},
		{"read operation", "admin: {allow: [listServices]}", "at '/admin/allow/0': value must be one of"},
		{"repeated operation", "admin: {allow: [setHA, setHA]}", "at '/admin/allow': items at 0 and 1 are equal"},
		{"port zero", "service: {port: 0}", "at '/service/port': minimum: got 0, want 1"},
		{"port too high", "admin: {port: 70000}", "at '/admin/port': maximum: got 70,000, want 65,535"},
		{"negative replicas", "replicaCount: -1", "at '/replicaCount': minimum: got -1, want 0"},
		{"one shard", "sharding: {totalShards: 1}", "at '/sharding/totalShards': minimum: got 1, want 2"},
		{"negative grace", "admin: {terminationGracePeriodSeconds: -5}", "at '/admin/terminationGracePeriodSeconds': minimum: got -5, want 0"},
		{"duration", "serviceMonitor: {interval: 30 sec}", "at '/serviceMonitor/interval': '30 sec' does not match pattern"},
		{"api url", "api: {url: api.example.net}", "at '/api/url': 'api.example.net' does not match pattern"},
		{"digest", "image: {digest: latest}", "at '/image/digest': 'latest' does not match pattern"},
		{"secret name", "credentials: {existingSecret: My_Creds}", "at '/credentials/existingSecret': 'My_Creds' does not match pattern"},
		{"full name", "fullnameOverride: Clouddb_Exporter", "at '/fullnameOverride': 'Clouddb_Exporter' does not match pattern"},
		{"namespace", "prometheusRule: {namespace: Monitoring}", "at '/prometheusRule/namespace': 'Monitoring' does not match pattern"},
		{"pdb", "podDisruptionBudget: {maxUnavailable: half}", "at '/podDisruptionBudget/maxUnavailable': 'oneOf' failed, none matched"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, minimalValues+tc.values)
			if err == nil {
				t.Fatalf("%s rendered; want the schema's error %q", tc.values, tc.want)
			}
			if msg := err.Error(); !strings.Contains(msg, schemaError) || !strings.Contains(msg, tc.want) {
				t.Errorf("%s: %v\nwant the schema's error %q", tc.values, err, tc.want)
			}
		})
	}
}

// TestSchemaAcceptsOpenValues: the Kubernetes objects the chart passes
// through, the maps of labels and annotations and a parent chart's global
// values are open; the accepted forms of the typed values render.
func TestSchemaAcceptsOpenValues(t *testing.T) {
	for _, values := range []string{
		"global: {imageRegistry: registry.internal, anything: {nested: [1, true]}}",
		"resources: {requests: {cpu: 1, memory: 1Gi, ephemeral-storage: 1Gi}, limits: {memory: 2Gi}, claims: [{name: x}]}",
		"podSecurityContext: {runAsNonRoot: true, supplementalGroups: [1000], sysctls: [{name: net.core.somaxconn, value: '1024'}]}",
		"securityContext: {privileged: false, seLinuxOptions: {level: 's0:c123,c456'}}",
		"nodeSelector: {kubernetes.io/os: linux}\ntolerations: [{key: dedicated, operator: Equal, value: monitoring, effect: NoSchedule}]",
		"affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [a]}]}]}}}",
		"podAnnotations: {prometheus.io/scrape: 'false'}\npodLabels: {team: sre}\nservice: {annotations: {a: b}, labels: {c: d}, type: LoadBalancer, port: 80}",
		"extraVolumes: [{name: ca, configMap: {name: ca}}]\nextraVolumeMounts: [{name: ca, mountPath: /etc/clouddb/ca}]\nextraArgs: [--collect.interval=2m, --collect.concurrency=4]\nlogLevel: debug\nlogFormat: logfmt",
		"env: [{name: GOMEMLIMIT, valueFrom: {resourceFieldRef: {resource: limits.memory}}}]\nimagePullSecrets: [{name: regcred}]",
		"image: {registry: '', digest: 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', pullPolicy: Always}",
		"serviceMonitor: {enabled: true, namespace: prom, interval: 1m30s, scrapeTimeout: '', relabelings: [{action: labeldrop, regex: pod}]}",
		"podDisruptionBudget: {enabled: true, minAvailable: '50%'}",
		"podDisruptionBudget: {enabled: true, maxUnavailable: 0}",
		"sharding: {enabled: true, totalShards: 2}\nreplicaCount: 0",
		"admin: {enabled: true, port: 8443, tokenSecret: {name: admin-token, key: bearer.token}, allow: [deleteService, updatePassword], service: {type: NodePort, port: 30443}}",
		"nameOverride: cdb\nfullnameOverride: cdb-prod",
		"api: {projectId: p1, url: 'http://cloudsim.monitoring.svc:8080/v1'}",
	} {
		if _, err := render(t, minimalValues+values); err != nil {
			t.Errorf("%s: %v", values, err)
		}
	}
	if _, err := render(t, fullValues); err != nil {
		t.Errorf("full values: %v", err)
	}
}

// TestSchemaClosesChartObjects keeps values.schema.json strict as it grows:
// every object of the chart's own (one with properties) refuses unknown
// keys, and every key has a type.
func TestSchemaClosesChartObjects(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	if schema["$schema"] != "http://json-schema.org/draft-07/schema#" {
		t.Errorf("$schema %v, want draft-07 (what Helm 3 documents)", schema["$schema"])
	}
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		props, ok := s["properties"].(map[string]any)
		if !ok {
			return
		}
		if s["additionalProperties"] != false && path != "/definitions/namedList/items" {
			t.Errorf("%s has properties but accepts unknown keys: add additionalProperties: false", path)
		}
		for name, p := range props {
			ps := p.(map[string]any)
			if ps["type"] == nil && ps["$ref"] == nil {
				t.Errorf("%s/%s has no type", path, name)
			}
			walk(path+"/"+name, ps)
		}
	}
	walk("", schema)
	for name, d := range schema["definitions"].(map[string]any) {
		ds := d.(map[string]any)
		walk("/definitions/"+name, ds)
		if items, ok := ds["items"].(map[string]any); ok {
			walk("/definitions/"+name+"/items", items)
		}
	}
}
