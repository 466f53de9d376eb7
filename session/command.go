package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// EventKind is what happened: a client command (one row of Commands) or
// one of the shell's events (Reply, TimerFired, Settle).
type EventKind uint8

// Events. A new command is a kind here and its row in Commands.
const (
	Prompt            EventKind = iota + 1 // a prompt (ID; Respond: answer it)
	Abort                                  // the abort command (Reply: the aborted reply of a call in flight)
	AbortRetry                             // the abort_retry command
	SetAutoRetry                           // set_auto_retry (Enabled)
	GetState                               // get_state
	Reply                                  // a model call's reply (Call, Reply, Switch)
	TimerFired                             // a timer fired (Timer.Kind, Timer.ID); cancelled timers never do
	Settle                                 // the end of a queue event: the sound variant resolves settled prompts
	SetRetrySettings                       // set_retry_settings (Policy, or Error when the shell refused them)
	SetAutoCompaction                      // set_auto_compaction (Enabled)
	numEventKinds                          // one past the last kind
)

// Event is one input of the core. At is the virtual time now.
type Event struct {
	Kind    EventKind
	At      time.Duration
	ID      string // a command's id, echoed in its response
	Respond bool   // Prompt: answer it (the scenario's initial prompt is not)
	Enabled bool   // an ArgBool argument: SetAutoRetry, SetAutoCompaction
	// Reply is the classified reply (Reply), or the aborted reply a call
	// in flight ends with (Abort).
	Reply classify.Outcome
	// Switch is auth storage's answer, should the reply's usage limit be
	// retried: credentials were switched (a 0 ms wait).
	Switch bool
	Call   uint64 // Reply: the call it answers
	Timer  Timer  // TimerFired
	// Policy is an ArgSettings argument (set_retry_settings), merged over
	// the settings in force and compiled by the shell; Error is why the
	// shell refused them.
	Policy *policy.Policy
	Error  string
}

// Command is one client command, declared once: the RPC command of that
// name (its "type"), the scenario action ("do"), the simulator's and the
// explorer's input and the Go client's method are read from its row of
// Commands, and its response's "command" is its Name.
type Command struct {
	// Name is the command's name on the wire, in scenario files and in
	// its response.
	Name string
	// Kind is the session event it becomes.
	Kind EventKind
	// Args are the arguments it reads besides "id", in the order they
	// are checked (and given to the Go client's method).
	Args []Arg
	// Note is said of the command in a help text, after its arguments.
	Note string
	// step is the command's rule: the core's step on its event.
	step func(st *stepper, ev *Event)
}

// Arg is an argument of a command: its name (the RPC field and the
// scenario action's key) and the kind of value it takes.
type Arg struct {
	Name string
	Kind ArgKind
	// Optional: the command may be sent without it.
	Optional bool
}

// ArgKind is the kind of value an argument takes, and where the shell
// puts it in the command's Event. A command has at most one argument of
// each kind that the event carries (ArgBool, ArgSettings).
type ArgKind uint8

// Argument kinds.
const (
	// ArgBool is true or false: Event.Enabled.
	ArgBool ArgKind = iota + 1
	// ArgText is a string: the prompt's text, which the core does not
	// read (the shell that shows it keeps it).
	ArgText
	// ArgSettings is an object of retry settings (SPEC §1), merged key by
	// key over those in force and validated by the shell: Event.Settings,
	// or Event.Error when refused.
	ArgSettings
	// ArgQueueMode is "steer" or "followUp": accepted on the wire and not
	// read (queueing is not simulated); scenario files have no such key.
	ArgQueueMode
	// ArgImages is an array of images: accepted on the wire and not read;
	// scenario files have no such key.
	ArgImages
)

// Want says what a value of the kind must be, for error messages.
func (k ArgKind) Want() string {
	switch k {
	case ArgBool:
		return "true or false"
	case ArgText:
		return "a string"
	case ArgSettings:
		return "an object of retry settings (SPEC §1), merged key by key over those in force"
	case ArgQueueMode:
		return `"steer" or "followUp"`
	case ArgImages:
		return "an array of images (accepted and ignored)"
	}
	return fmt.Sprintf("ArgKind(%d)", int(k))
}

// WireOnly reports whether arguments of the kind exist on the wire only:
// accepted from an RPC client for the original's sake, never read, and
// not keys of scenario files.
func (k ArgKind) WireOnly() bool { return k == ArgQueueMode || k == ArgImages }

// commands is the command table, in the order help texts and errors list
// the commands.
var commands = []Command{
	{Name: "prompt", Kind: Prompt, Args: []Arg{{Name: "message", Kind: ArgText},
		{Name: "streamingBehavior", Kind: ArgQueueMode, Optional: true}, {Name: "images", Kind: ArgImages, Optional: true}},
		Note: "streamingBehavior and images accepted; queueing is not simulated",
		step: func(st *stepper, ev *Event) { st.prompt(ev.Respond) }},
	{Name: "abort", Kind: Abort, step: (*stepper).abortCommand},
	{Name: "abort_retry", Kind: AbortRetry, step: func(st *stepper, _ *Event) {
		// The response comes before the auto_retry_end it causes, as in
		// the original.
		st.respond(true, "", false)
		st.decide(retry.InputAbortRetry, nil)
	}},
	{Name: "set_auto_retry", Kind: SetAutoRetry, Args: []Arg{{Name: "enabled", Kind: ArgBool}}, step: func(st *stepper, ev *Event) {
		// The rest of the step sees the new value.
		changed := &st.b.pol
		*changed = *st.pol.WithEnabled(ev.Enabled)
		st.pol = changed
		st.effect(SetEnabled).Enabled = ev.Enabled
		st.respond(true, "", false)
	}},
	{Name: "set_retry_settings", Kind: SetRetrySettings, Args: []Arg{{Name: "settings", Kind: ArgSettings}}, step: func(st *stepper, ev *Event) {
		if ev.Error != "" || ev.Policy == nil {
			st.respond(false, ev.Error, false)
			return
		}
		st.pol = ev.Policy // the rest of the step sees it
		st.effect(SetSettings).Policy = ev.Policy
		st.respond(true, "", false)
	}},
	{Name: "set_auto_compaction", Kind: SetAutoCompaction, Args: []Arg{{Name: "enabled", Kind: ArgBool}}, step: func(st *stepper, ev *Event) {
		// Read at the next compaction check (the original's
		// compaction.enabled setting).
		st.effect(SetCompaction).Enabled = ev.Enabled
		st.respond(true, "", false)
	}},
	{Name: "get_state", Kind: GetState, step: func(st *stepper, _ *Event) { st.respond(true, "", true) }},
}

// commandOf finds a command's row by its event kind (nil: not a command).
var commandOf [numEventKinds]*Command

func init() {
	for i := range commands {
		c := &commands[i]
		if commandOf[c.Kind] != nil {
			panic("session: two commands of event kind " + fmt.Sprint(c.Kind))
		}
		commandOf[c.Kind] = c
	}
}

// Commands returns the command table (a copy), in the order help texts
// and errors list the commands.
func Commands() []Command { return append([]Command(nil), commands...) }

// CommandNames lists the commands' names, in the table's order.
func CommandNames() []string {
	names := make([]string, len(commands))
	for i := range commands {
		names[i] = commands[i].Name
	}
	return names
}

// CommandByName returns the command called name.
func CommandByName(name string) (Command, bool) {
	for i := range commands {
		if commands[i].Name == name {
			return commands[i], true
		}
	}
	return Command{}, false
}

// CommandOf returns the command that becomes events of kind k; false when
// k is no command (Reply, TimerFired, Settle).
func CommandOf(k EventKind) (Command, bool) {
	if int(k) >= len(commandOf) || commandOf[k] == nil {
		return Command{}, false
	}
	return *commandOf[k], true
}

// Event returns the command's event, with id: Respond is set (a command
// is answered) and its arguments are left for the shell to set.
func (c *Command) Event(id string) Event { return Event{Kind: c.Kind, ID: id, Respond: true} }

// Usage is the command and its arguments for a help text: "set_auto_retry
// {enabled}", "prompt {message} (a note)". Wire-only arguments are left
// to the note.
func (c *Command) Usage() string {
	var names []string
	for _, a := range c.Args {
		if !a.Kind.WireOnly() {
			names = append(names, a.Name)
		}
	}
	u := c.Name
	if len(names) > 0 {
		u += " {" + strings.Join(names, ", ") + "}"
	}
	if c.Note != "" {
		u += " (" + c.Note + ")"
	}
	return u
}
