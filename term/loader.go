package term

import "strconv"

// DelaySeconds is the original's Math.round(delayMs / 1000): whole
// seconds, halves rounded up (toward +Inf): 1500 ms gives 2, 1499 ms 1,
// 0 ms 0, -1500 ms -1.
func DelaySeconds(delayMs int64) int64 {
	q, r := delayMs/1000, delayMs%1000
	if r < 0 { // floor division
		q--
		r += 1000
	}
	if r >= 500 {
		q++
	}
	return q
}

// RetryingText is the loader text the original shows during a backoff:
// "Retrying (attempt/maxAttempts) in Ns… (esc to cancel)" with N =
// DelaySeconds(delayMs) and the ellipsis U+2026. In persistent mode
// (maxAttempts 0: no count limit) it is "Retrying (attempt N) in Ns… (esc
// to cancel)".
func RetryingText(attempt, maxAttempts int, delayMs int64) string {
	count := strconv.Itoa(attempt) + "/" + strconv.Itoa(maxAttempts)
	if maxAttempts == 0 {
		count = "attempt " + strconv.Itoa(attempt)
	}
	return "Retrying (" + count + ") in " + strconv.FormatInt(DelaySeconds(delayMs), 10) + "s\u2026 (esc to cancel)"
}

// RetryFailedText is the error the original shows when a chain ends
// without success: "Retry failed after N attempts: <finalError>", with
// "Unknown error" for an empty finalError and no pluralisation ("after 1
// attempts").
func RetryFailedText(attempt int, finalError string) string {
	if finalError == "" {
		finalError = "Unknown error"
	}
	return "Retry failed after " + strconv.Itoa(attempt) + " attempts: " + finalError
}
