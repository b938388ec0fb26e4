package config

import "time"

// Scripts configures the scripts that script executors run (package
// scripts). Like skills, scripts are gateway-wide configuration: every
// tenant runs the same scripts, and nothing a tenant does changes them.
type Scripts struct {
	// Dir is the directory the scripts are loaded from: every *.cel file
	// in it and below. A relative path is resolved against the directory
	// of the configuration file.
	Dir string `json:"dir,omitempty"`
}

// The time limit of one script run: DefaultScriptTimeout when the
// executor (or its capability's reliability) sets no timeoutMs, and never
// more than MaxScriptTimeout whatever it sets.
const (
	DefaultScriptTimeout = time.Second
	MaxScriptTimeout     = 10 * time.Second
)

// ScriptTimeout is the time limit of one run of the script executor x.
func ScriptTimeout(x Executor) time.Duration {
	if x.TimeoutMs <= 0 {
		return DefaultScriptTimeout
	}
	return min(time.Duration(x.TimeoutMs)*time.Millisecond, MaxScriptTimeout)
}

// scriptExecutor checks a script executor at ptr: the file must say where
// its scripts are (scripts.dir), and its own timeoutMs must stay within
// MaxScriptTimeout. Whether the script it names exists is checked when
// the scripts are loaded (scripts.FromConfig), relative to the file.
func (c *checker) scriptExecutor(ptr string, _ *kindInfo) {
	if _, ok := c.str(ptr + "/script"); ok {
		if _, dir := c.str("/scripts/dir"); !dir {
			c.report(ptr+"/script", "names a script, but the file sets no scripts.dir: add scripts: {dir: DIR} naming the directory of the *.cel files")
		}
	}
	var ms int
	if !c.reportedUnder(ptr+"/timeoutMs") && c.decode(ptr+"/timeoutMs", &ms) && time.Duration(ms)*time.Millisecond > MaxScriptTimeout {
		c.report(ptr+"/timeoutMs", "is longer than a script may run (%d ms at most): a script is a bounded computation", MaxScriptTimeout.Milliseconds())
	}
}
