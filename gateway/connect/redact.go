package connect

import (
	"errors"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// Error texts leave the gateway: a connection's problems are logged and
// audited (config.reloaded lists them), an executor's error is answered to
// the client. They name a URL by its host only, and never carry a value
// the configuration holds for the connection (its URL's query and user
// information, its header values, its env values, with ${NAME} read).

// urlRE finds URLs in an error text.
var urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// minSecret is the length below which a configured value is not searched
// for in an error text (a short value would match ordinary words).
const minSecret = 4

// hostOnly replaces every URL in s with its scheme and host.
func hostOnly(s string) string {
	return urlRE.ReplaceAllStringFunc(s, func(m string) string {
		u, err := url.Parse(m)
		if err != nil || u.Host == "" {
			return "[url]"
		}
		return u.Scheme + "://" + u.Host
	})
}

// withoutURLError words err with each *url.Error in its chain reduced to
// its cause: "Post "https://host/path?key=…": dial tcp …" becomes "dial tcp
// …".
func withoutURLError(err error) string {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		msg = strings.ReplaceAll(msg, ue.Error(), ue.Err.Error())
	}
	return msg
}

// secretValues lists the values of c an error text must not carry besides
// its URLs (which hostOnly reduces to their host): their query and user
// information, its header and env values and its API key as written and as
// read from the environment. Longest first, so that a value containing another is
// removed whole.
func secretValues(c config.Connection, getenv func(string) string) []string {
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if len(v) >= minSecret && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	for _, raw := range []string{c.URL, c.BaseURL} {
		if raw == "" {
			continue
		}
		if u, err := url.Parse(raw); err == nil {
			add(u.RawQuery, u.Fragment)
			for _, vs := range u.Query() {
				add(vs...)
			}
			if u.User != nil {
				p, _ := u.User.Password()
				add(u.User.String(), p)
			}
		}
	}
	values := map[string]string{"apiKey": c.APIKey}
	if c.Auth != nil {
		values["clientSecret"], values["privateKey"] = c.Auth.ClientSecret, c.Auth.PrivateKey
	}
	for _, m := range []map[string]string{c.Headers, c.Env, values} {
		for _, v := range m {
			s, _ := config.Interpolate(v, getenv)
			add(v, s)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// redact makes s fit to leave the gateway: URLs reduced to their host,
// then every secret value replaced.
func redact(s string, secrets []string) string {
	s = hostOnly(s)
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// secretList returns the values an error text must not carry, fit for
// redact: those of minSecret bytes or more, longest first.
func secretList(vs ...string) []string {
	var out []string
	for _, v := range vs {
		if len(v) >= minSecret && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// scrub returns out with every occurrence of the upstream token secret
// replaced by [redacted] (out itself when it holds none).
func scrub(out map[string]any, secret string) map[string]any {
	if out == nil || len(secret) < minSecret {
		return out
	}
	clean, _ := scrubValue(out, secret)
	return clean.(map[string]any)
}

// scrubValue replaces secret in every string of v, map keys included, and
// reports whether it found any: a value without it is returned as it is,
// uncopied; a map or list that holds it is copied with the strings
// replaced, so the caller's values are never changed.
func scrubValue(v any, secret string) (any, bool) {
	switch v := v.(type) {
	case string:
		if !strings.Contains(v, secret) {
			return v, false
		}
		return strings.ReplaceAll(v, secret, "[redacted]"), true
	case map[string]any:
		var out map[string]any
		for k, x := range v {
			cx, changed := scrubValue(x, secret)
			ck, keyChanged := scrubValue(k, secret)
			if !changed && !keyChanged {
				continue
			}
			if out == nil {
				out = maps.Clone(v)
			}
			if keyChanged {
				delete(out, k)
			}
			out[ck.(string)] = cx
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		var out []any
		for i, x := range v {
			if cx, changed := scrubValue(x, secret); changed {
				if out == nil {
					out = slices.Clone(v)
				}
				out[i] = cx
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	}
	return v, false
}

// scrubError is scrub for an executor error's message and output.
func scrubError(err error, secret string) error {
	var xe *workflow.ExecutorError
	if err == nil || len(secret) < minSecret || !errors.As(err, &xe) {
		return err
	}
	xe.Message = strings.ReplaceAll(xe.Message, secret, "[redacted]")
	xe.Output = scrub(xe.Output, secret)
	return err
}
