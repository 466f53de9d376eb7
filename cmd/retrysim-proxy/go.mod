module github.com/ohmypi/retryfsm/cmd/retrysim-proxy

go 1.26.0

require (
	github.com/ohmypi/retryfsm v0.0.0-00010101000000-000000000000
	github.com/ohmypi/retryfsm/proxy v0.0.0-00010101000000-000000000000
)

require (
	github.com/VividCortex/ewma v1.2.0 // indirect
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/cheggaaa/pb/v3 v3.3.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.2.0 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/looplab/fsm v1.0.3 // indirect
	github.com/mattn/go-colorable v0.1.16 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
	golang.org/x/sys v0.49.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/ohmypi/retryfsm => ../..

replace github.com/ohmypi/retryfsm/proxy => ../../proxy
