module github.com/tollfree/tollfree/examples/eval-batch

go 1.26.8

require github.com/tollfree/tollfree v0.0.0

require (
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/net v0.63.0 // indirect
	golang.org/x/text v0.44.0 // indirect
)

replace github.com/tollfree/tollfree => ../..
