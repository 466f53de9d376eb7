module github.com/ohmypi/retryfsm/proxy

go 1.26.0

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/ohmypi/retryfsm v0.0.0-00010101000000-000000000000
	go.uber.org/goleak v1.3.0
	gopkg.in/yaml.v3 v3.0.1
	pgregory.net/rapid v1.3.0
)

require (
	github.com/benbjohnson/clock v1.3.5 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/looplab/fsm v1.0.3 // indirect
)

replace github.com/ohmypi/retryfsm => ../
