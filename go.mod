module github.com/ohmypi/retryfsm

go 1.26

require (
	github.com/benbjohnson/clock v1.3.5
	github.com/creack/pty v1.1.24
	github.com/go-json-experiment/json v1.27.2
	github.com/looplab/fsm v1.0.3
	go.uber.org/goleak v1.3.0
	gopkg.in/yaml.v3 v3.0.1
	pgregory.net/rapid v1.3.0
)

require github.com/kr/text v0.2.0 // indirect
