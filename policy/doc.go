// Package policy is the auto-retry policy of an LLM agent as an explicit
// state machine, as a Go agent embeds it: Controller, the engine that
// decides and performs the retries, with the retry settings compiled once
// into a Policy, the named profiles, and the events and outcomes a caller
// sees. The pure core beneath it (the settings' rules, the transition
// tables and their pure Decide) is package policy/retry, whose embedder's
// names this package gives as aliases; the classification of replies (the
// original agent's exact regexes and retry-after parser) is package
// policy/classify.
//
// # The agent loop
//
// The agent feeds the Controller every run, the prompt's and each retried
// one, and a prompt is done when its retry chain is. After a backoff the
// Controller calls the agent's Continue, which runs again:
//
//	// run is one run of the agent: its model calls (a tool use calls again),
//	// each reply's message_end, then agent_end with the last reply.
//	func (a *agent) run(ctx context.Context) {
//		var last *policy.AssistantMessage
//		for reply := range a.callModel(ctx) {
//			a.ctl.OnMessageEnd(reply)
//			last = &reply
//		}
//		if !a.ctl.OnAgentEnd(last) { // no retry scheduled
//			a.compactIfOverflow(last)
//		}
//	}
//
//	// Continue implements policy.Agent: after a backoff the Controller calls it,
//	// on the timer's goroutine, to run again.
//	func (a *agent) Continue(ctx context.Context) error {
//		if err := ctx.Err(); err != nil { // aborted before the retry started
//			return err
//		}
//		a.run(ctx)
//		return nil
//	}
//
//	// Prompt runs a new prompt. It is done when its run and its retry chain are:
//	// nil, an error matching ErrRetryCancelled, an *ExhaustedError or ctx.Err().
//	func (a *agent) Prompt(ctx context.Context, text string) error {
//		a.ctl.OnPrompt(ctx)
//		a.messages = append(a.messages, text)
//		a.run(ctx)
//		return a.ctl.WaitForRetry(ctx)
//	}
//
// The prompt's ctx bounds its retry chain: when it ends, the pending wait is
// cancelled and so is a retried run's ctx (see OnPrompt). An agent that
// keeps its replies in a runtime context also has DropLastAssistant (a
// retried error leaves it; an agent with nothing to drop need not), and it
// is given to NewController:
//
//	a.ctl, err = policy.NewController(policy.Config{Agent: a, Auth: authStorage, Settings: settings})
//
// From the user interface: AbortRetry (Esc) cancels the retry chain, Abort
// cancels it and the retried run's ctx, SetAutoRetryEnabled switches retry
// on or off. Subscribe receives the auto_retry_start and auto_retry_end
// events. ExampleController runs this loop on a toy agent.
//
// Callbacks (subscribers, the Agent, AuthStorage) run without the
// Controller's lock and may call it back; events arrive in the order of the
// decisions (see Controller). SPEC.md is the precise contract.
//
// To retry one call rather than an agent's runs, retryfsm.Do (the module's
// root package) runs a Controller for it. adapters/otel records the chains
// with OpenTelemetry.
//
// # Testing code that retries
//
// Tests need no mock clock: run them in a testing/synctest bubble
// (synctest.Test) and the real clock's 2, 4 and 8 s waits pass at once,
// since time in a bubble jumps ahead whenever all its goroutines are
// blocked; time.Since still reads the waits. The root package's
// Example_synctest shows such a test. (Config.Clock takes a
// clock.Clock, for example benbjohnson's clock.NewMock, when a test
// wants to move time itself.)
package policy
