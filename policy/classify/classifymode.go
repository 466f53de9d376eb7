package classify

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// The classification modes (a Classifier's Mode, the retry settings'
// "classify").
const (
	// ClassifyMessage is the original's rule: an error is retryable when
	// its message matches the retryable regex (isRetryableErrorMessage).
	// The zero string ("") means the same.
	ClassifyMessage string = "message"
	// ClassifyStatus decides by the HTTP status when the reply has one
	// (isRetryableStatus), else as ClassifyMessage.
	ClassifyStatus string = "status"
	// ClassifyStrict is ClassifyStatus, except that a quota or billing
	// message is never retryable and that, without a status, the numbers
	// of the retryable regex match only as whole numbers.
	ClassifyStrict string = "strict"
)

// ParseMode returns the mode named s: "message", "status" or "strict", or
// ClassifyMessage for "" (the default). Anything else is an error naming
// the allowed values.
func ParseMode(s string) (string, error) {
	switch m := string(s); m {
	case "":
		return ClassifyMessage, nil
	case ClassifyMessage, ClassifyStatus, ClassifyStrict:
		return m, nil
	}
	return "", fmt.Errorf("classify %q: allowed values are \"message\" (the default), \"status\" and \"strict\"", s)
}

// Classifier classifies assistant replies in one of the ClassifyModes, with
// optional lists of regexps that override the mode. The zero value, and a
// nil *Classifier, classify as the original does (message mode, no
// patterns: SPEC §2.1 and §2.3). A Mode other than the
// three constants (and "") behaves as ClassifyMessage; NewClassifier and
// ParseMode reject it. A Classifier is not changed by Classify, so
// it may be shared between goroutines.
type Classifier struct {
	// Mode is the classification mode; "" means ClassifyMessage.
	Mode string
	// Retryable are patterns that make an error retryable, whatever the
	// mode (see Classify).
	Retryable []*regexp.Regexp
	// NonRetryable are patterns that make an error not retryable; they win
	// over Retryable.
	NonRetryable []*regexp.Regexp
}

// NewClassifier builds a Classifier from settings: mode as
// ParseMode reads it, and the two pattern lists as CompilePatterns
// compiles them. An error names the setting at fault ("classify",
// "retryablePatterns[i]" or "nonRetryablePatterns[i]").
func NewClassifier(mode string, retryable, nonRetryable []string) (*Classifier, error) {
	m, err := ParseMode(mode)
	if err != nil {
		return nil, err
	}
	r, err := CompilePatterns(retryable)
	if err != nil {
		return nil, fmt.Errorf("retryablePatterns%w", err)
	}
	n, err := CompilePatterns(nonRetryable)
	if err != nil {
		return nil, fmt.Errorf("nonRetryablePatterns%w", err)
	}
	return &Classifier{Mode: m, Retryable: r, NonRetryable: n}, nil
}

// CompilePatterns compiles each pattern as a Go (RE2) regular expression,
// case-insensitive (the pattern is prefixed with "(?i)"), unanchored: it
// matches anywhere in a message. An empty pattern, which would match every
// message, is an error, as is a pattern that does not compile; the error
// starts with the index in brackets and quotes the pattern, for example
// `[1] "(oops": error parsing regexp: missing closing ): ...`. A nil or empty
// list gives nil.
func CompilePatterns(patterns []string) ([]*regexp.Regexp, error) {
	if len(patterns) == 0 {
		return nil, nil
	}
	out := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		if p == "" {
			return nil, fmt.Errorf("[%d] \"\": an empty pattern matches every message", i)
		}
		// Parsed alone first, so that the error quotes the pattern as
		// written and no prefix can change how it parses (regexp.Compile's
		// errors are its parse's: syntax.Perl is its flags).
		if _, err := syntax.Parse(p, syntax.Perl); err != nil {
			return nil, fmt.Errorf("[%d] %q: %w", i, p, err)
		}
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			return nil, fmt.Errorf("[%d] %q: %w", i, p, err)
		}
		out[i] = re
	}
	return out, nil
}

// Classify classifies m with contextWindow the model's context window (0:
// unknown). A reply whose stop reason is "aborted" is ClassAborted, and
// any other that is not "error" ClassSuccess, whatever its usage
// ("toolUse" and "length" included). For an error, the first rule that applies
// decides, in every mode:
//
//  1. A context overflow (isContextOverflow) is ClassOverflow.
//  2. A message matching one of NonRetryable is ClassFatal.
//  3. A message matching one of Retryable is ClassRetryable.
//  4. The mode decides.
//
// Message mode: ClassRetryable if the message is not empty and matches the
// original's retryable regex (isRetryableErrorMessage), else ClassFatal.
//
// Status mode: with a status (m.Status != 0), isRetryableStatus(m.Status,
// m.Headers) decides, even for an empty message; without one, as message
// mode.
//
// Strict mode: a message containing, ASCII case-insensitively, one of
// "insufficient_quota", "quota exceeded", "exceeded your current quota",
// "billing", "insufficient balance", "credit balance is too low" or "out of
// budget" is ClassFatal, whatever the status and x-should-retry; otherwise
// as status mode, except that without a status the retryable regex's 429,
// 500, 502, 503 and 504 match only as whole numbers (not next to another
// ASCII digit: "65000" does not contain 500, "HTTP 500:" and "500ms" do).
//
// The patterns are matched against the message as is, even an empty one.
// With no patterns, message mode is the original's rule: m's Status and
// Headers are not read, and an empty message is never retryable (the
// original's step 1 treats "" as missing) though the usage rule can still
// make it overflow.
func (c *Classifier) Classify(m AssistantMessage, contextWindow int64) Class {
	if m.StopReason != StopReasonError {
		return c.class(m, "", false)
	}
	folded := foldASCII(m.ErrorMessage)
	return c.class(m, folded, contextOverflow(m, folded, contextWindow))
}

// class is the one classification rule (Classify's), with folded,
// foldASCII(m.ErrorMessage), and overflow, isContextOverflow of m, worked
// out by the caller (Reply needs both for every reply; neither is read for
// a reply that is not an error).
func (c *Classifier) class(m AssistantMessage, folded string, overflow bool) Class {
	switch m.StopReason {
	case StopReasonError:
	case StopReasonAborted:
		return ClassAborted
	default:
		return ClassSuccess
	}
	if overflow {
		return ClassOverflow
	}
	msg := m.ErrorMessage
	mode := ClassifyMessage
	if c != nil {
		ascii := isASCII(msg)
		if matchesAny(c.NonRetryable, msg, folded, ascii) {
			return ClassFatal
		}
		if matchesAny(c.Retryable, msg, folded, ascii) {
			return ClassRetryable
		}
		mode = c.Mode
	}
	retryable := false
	switch mode {
	case ClassifyStrict:
		switch {
		case quotaFolded(folded):
			retryable = false
		case m.Status != 0:
			retryable = isRetryableStatus(m.Status, m.Headers)
		default:
			retryable = msg != "" && wholeNumbersFolded(msg, folded)
		}
	case ClassifyStatus:
		if m.Status != 0 {
			retryable = isRetryableStatus(m.Status, m.Headers)
		} else {
			retryable = msg != "" && retryableFolded(folded)
		}
	default:
		retryable = msg != "" && retryableFolded(folded)
	}
	if retryable {
		return ClassRetryable
	}
	return ClassFatal
}

// matchesAny reports whether one of res matches s, whose foldASCII is
// folded; ascii: s is ASCII. In an ASCII text a pattern runs only when
// folded contains one of its needles (patternNeedles): a pattern without
// Go's literal prefix (every case-insensitive one) is otherwise tried at
// every position of the text.
func matchesAny(res []*regexp.Regexp, s, folded string, ascii bool) bool {
	for _, re := range res {
		if re == nil {
			continue
		}
		if ascii {
			if n := patternNeedles(re); n != nil && !containsAny(folded, n) {
				continue
			}
		}
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// isASCII reports whether s has only ASCII bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// needlesBySource caches patternNeedles by the pattern's source, for at
// most maxCachedNeedles patterns (cachedNeedles of them): the needles of a
// pattern past the bound (a process that compiles ever new patterns, from
// RPC settings say) are read again at each use, so memory stays bounded.
var (
	needlesBySource  sync.Map // string -> []string
	cachedNeedles    atomic.Int64
	maxCachedNeedles int64 = 4096
)

// patternNeedles returns ASCII literals in lower case of which every match
// of re in an ASCII text contains one, its case folded by foldASCII (nil
// when re's syntax gives none). It reads re's syntax tree (regexp/syntax,
// as regexp.Compile parses it): a literal, case-folded or not, is its
// letters in lower case (in an ASCII text a case-insensitive letter
// matches only its two cases); a concatenation needs what one of its parts
// needs (the part with the longest shortest needle); an alternation one of
// what each alternative needs; a group, x+ and x{n,} with n >= 1 what x
// needs; anything else (x*, x?, classes, anchors, non-ASCII literals)
// nothing known.
func patternNeedles(re *regexp.Regexp) []string {
	src := re.String()
	if v, ok := needlesBySource.Load(src); ok {
		return v.([]string)
	}
	var n []string
	if tree, err := syntax.Parse(src, syntax.Perl); err == nil {
		n = requiredLiterals(tree)
	}
	if cachedNeedles.Add(1) > maxCachedNeedles {
		cachedNeedles.Add(-1)
	} else if _, loaded := needlesBySource.LoadOrStore(src, n); loaded {
		cachedNeedles.Add(-1)
	}
	return n
}

// requiredLiterals is patternNeedles of the syntax tree re.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		b := make([]byte, 0, len(re.Rune))
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return nil
			}
			c := byte(r)
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
		}
		if len(b) == 0 {
			return nil
		}
		return []string{string(b)}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []string
		bestLen := 0
		for _, sub := range re.Sub {
			n := requiredLiterals(sub)
			if n == nil {
				continue
			}
			short := len(n[0])
			for _, x := range n[1:] {
				short = min(short, len(x))
			}
			if short > bestLen {
				best, bestLen = n, short
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			n := requiredLiterals(sub)
			if n == nil {
				return nil
			}
			all = append(all, n...)
		}
		return all
	}
	return nil
}

// isRetryableStatus is the Stainless SDKs' rule (Anthropic, OpenAI) for a
// response with HTTP status status: an x-should-retry header of exactly
// "true" or "false" (spaces and tabs around it ignored) decides; any other
// value, or none, is ignored. Otherwise 408, 409, 429 and every status >= 500
// are retryable and other statuses are not. headers are keyed by lower-case
// name, as in AssistantMessage.
func isRetryableStatus(status int, headers map[string]string) bool {
	if v, present := headers[headerShouldRetry]; present {
		switch strings.Trim(v, " \t") {
		case "true":
			return true
		case "false":
			return false
		}
	}
	return status == 408 || status == 409 || status == 429 || status >= 500
}

// quotaPhrases are the texts that make an error not retryable in strict
// mode, in lower case (the message is ASCII-folded).
var quotaPhrases = []string{
	"insufficient_quota",
	"quota exceeded",
	"exceeded your current quota",
	"billing",
	"insufficient balance",
	"credit balance is too low",
	"out of budget",
}

// isQuotaErrorMessage reports whether s contains one of quotaPhrases, ASCII
// case-insensitively.
func isQuotaErrorMessage(s string) bool { return quotaFolded(foldASCII(s)) }

// quotaFolded is isQuotaErrorMessage of the message whose foldASCII is f.
func quotaFolded(f string) bool {
	for _, p := range quotaPhrases {
		if strings.Contains(f, p) {
			return true
		}
	}
	return false
}

// retryableWordsSource is the original's retryable regex without its five
// number alternatives (TestRetryableSplit checks that the two parts make up
// the whole).
const retryableWordsSource = `overloaded|rate.?limit|usage.?limit|too many requests|service.?unavailable|server error|internal error|connection.?error|fetch failed|retry delay`

// retryableNumberRe matches the number alternatives as whole numbers.
// Digits are ASCII in JavaScript's \d too, so this needs no translation;
// consuming the neighbouring character is harmless for a yes/no match.
var retryableNumberRe = regexp.MustCompile(`(?:^|[^0-9])(?:429|500|502|503|504)(?:[^0-9]|$)`)

// isRetryableWholeNumbers is isRetryableErrorMessage with 429, 500, 502, 503
// and 504 matching only where no ASCII digit is next to them.
// The words are matched as isRetryableErrorMessage matches them (those of
// retryableWordsSource: the plain literals looked up directly, the `.?`
// words by matchesDotWords), and every number starts with 4 or 5.
func isRetryableWholeNumbers(s string) bool { return wholeNumbersFolded(s, foldASCII(s)) }

// wholeNumbersFolded is isRetryableWholeNumbers of s, whose foldASCII is f.
func wholeNumbersFolded(s, f string) bool {
	for _, lit := range retryableLiterals {
		if (lit[0] < '0' || lit[0] > '9') && strings.Contains(f, lit) {
			return true
		}
	}
	if matchesDotWords(f) {
		return true
	}
	return strings.ContainsAny(s, "45") && retryableNumberRe.MatchString(s)
}
