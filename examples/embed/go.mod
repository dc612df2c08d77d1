module github.com/tollfree/tollfree/examples/embed

go 1.26.8

require github.com/tollfree/tollfree v0.0.0

require github.com/goccy/go-yaml v1.19.2 // indirect

replace github.com/tollfree/tollfree => ../..
