package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// k8sSchemas names the vendored schema file (schemas/kubernetes-v1.33.0,
// from the kubernetes-validate package on PyPI) of each kind the manifests
// may hold.
var k8sSchemas = map[string]string{
	"v1/ConfigMap":             "configmap-v1.json",
	"v1/PersistentVolumeClaim": "persistentvolumeclaim-v1.json",
	"v1/Service":               "service-v1.json",
	"apps/v1/Deployment":       "deployment-apps-v1.json",
	"batch/v1/Job":             "job-batch-v1.json",
	"batch/v1/CronJob":         "cronjob-batch-v1.json",
}

const k8sSchemaDir = "schemas/kubernetes-v1.33.0"

// manifests reads every document of the YAML files in deploy/kubernetes.
func manifests(t *testing.T) map[string][]map[string]any {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes (%v)", err)
	}
	out := map[string][]map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			var obj map[string]any
			if err := json.Unmarshal(j, &obj); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			if obj != nil {
				out[f] = append(out[f], obj)
			}
		}
	}
	return out
}

// k8sCompiler loads the vendored Kubernetes schemas under their $id.
func k8sCompiler(t *testing.T) *jsonschema.Compiler {
	t.Helper()
	c := jsonschema.NewCompiler()
	names := []string{"_definitions.json"}
	for _, n := range k8sSchemas {
		names = append(names, n)
	}
	for _, n := range names {
		doc := readJSONSchema(t, filepath.Join(k8sSchemaDir, n))
		id, _ := doc.(map[string]any)["$id"].(string)
		if id == "" {
			t.Fatalf("%s: no $id", n)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	return c
}

func readJSONSchema(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// TestKubernetesManifestsFollowSchema validates every object of
// deploy/kubernetes against the strict Kubernetes 1.33 schema of its kind
// (unknown fields are errors).
func TestKubernetesManifestsFollowSchema(t *testing.T) {
	c := k8sCompiler(t)
	for file, objs := range manifests(t) {
		for _, obj := range objs {
			kind := fmt.Sprintf("%v/%v", obj["apiVersion"], obj["kind"])
			name := k8sSchemas[kind]
			if name == "" {
				t.Errorf("%s: %s has no vendored schema", file, kind)
				continue
			}
			id := readJSONSchema(t, filepath.Join(k8sSchemaDir, name)).(map[string]any)["$id"].(string)
			sch, err := c.Compile(id)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if err := sch.Validate(roundTrip(t, obj)); err != nil {
				t.Errorf("%s: %s %v: %v", file, kind, metaName(obj), err)
			}
		}
	}
}

// roundTrip turns a decoded object into the value form the validator wants
// (numbers as json.Number).
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func metaName(obj map[string]any) any {
	m, _ := obj["metadata"].(map[string]any)
	return m["name"]
}

// discoveryToJSONSchema turns schemas of a Google API discovery document
// into one JSON Schema (draft 2020-12) with those schemas under $defs.
// Discovery schemas are JSON Schema draft 3 in spirit; this adds what the
// discovery format states only in prose: a property whose description
// starts with "Required." is required, and no other property is allowed
// (a misspelt key such as "helptext" would otherwise pass silently).
func discoveryToJSONSchema(schemas map[string]any, root string) map[string]any {
	var conv func(v any) any
	conv = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, x := range v {
				switch k {
				case "id", "enumDescriptions", "format", "deprecated", "readOnly":
				case "$ref":
					out[k] = "#/$defs/" + x.(string)
				case "properties":
					props := map[string]any{}
					var req []any
					for name, p := range x.(map[string]any) {
						props[name] = conv(p)
						if d, _ := p.(map[string]any)["description"].(string); strings.HasPrefix(d, "Required.") {
							req = append(req, name)
						}
					}
					out[k] = props
					out["additionalProperties"] = false
					if len(req) > 0 {
						out["required"] = req
					}
				default:
					out[k] = conv(x)
				}
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = conv(x)
			}
			return out
		}
		return v
	}
	defs := map[string]any{}
	for name, s := range schemas {
		defs[name] = conv(s)
	}
	return map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs, "$ref": "#/$defs/" + root}
}

// TestFlexTemplateMetadataFollowsSchema validates deploy/dataflow/metadata.json
// against TemplateMetadata of the Dataflow API (v1b3, vendored).
func TestFlexTemplateMetadataFollowsSchema(t *testing.T) {
	var vendored struct {
		Schemas map[string]any `json:"schemas"`
	}
	b, err := os.ReadFile("schemas/dataflow-v1b3-templates.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vendored); err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://dataflow.googleapis.com/$discovery/TemplateMetadata.json"
	if err := c.AddResource(url, roundTrip(t, discoveryToJSONSchema(vendored.Schemas, "TemplateMetadata"))); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(readJSONSchema(t, "dataflow/metadata.json")); err != nil {
		t.Errorf("dataflow/metadata.json: %v", err)
	}
	// The converted schema must catch what it is there for.
	for _, bad := range []string{`{"parameters": []}`, `{"name": "x", "parameters": [{"name": "k", "label": "k", "helptext": "typo"}]}`} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if sch.Validate(v) == nil {
			t.Errorf("schema accepts %s", bad)
		}
	}
}
