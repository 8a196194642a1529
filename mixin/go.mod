module github.com/clouddb/clouddb_exporter/mixin

go 1.26.8

require (
	github.com/google/go-jsonnet v0.21.0
	go.yaml.in/yaml/v3 v3.0.4
)

require (
	golang.org/x/crypto v0.36.0 // indirect
	golang.org/x/sys v0.31.0 // indirect
	sigs.k8s.io/yaml v1.4.0 // indirect
)
