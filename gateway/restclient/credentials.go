package restclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// The fetch functions below obtain tokens for a Renewing source; each
// failure is a *RenewError whose Reason says what went wrong without a
// token, a secret or the output of a command.

// DefaultCommandTimeout bounds one run of a token command.
const DefaultCommandTimeout = 30 * time.Second

// maxCommandOutput bounds what a token command may print on stdout.
const maxCommandOutput = 64 << 10

// CommandOptions configure CommandToken.
type CommandOptions struct {
	// Timeout bounds one run (default DefaultCommandTimeout); the
	// command is killed when it is exceeded.
	Timeout time.Duration
	// Env is the command's environment (nil: this process's).
	Env []string
	// Stderr receives what the command writes on its stderr (nil:
	// discarded).
	Stderr io.Writer
}

// CommandToken returns a Fetch that runs argv (no shell: argv[0] is found
// on PATH) with no stdin, and takes its stdout, surrounding white space
// removed, as the token: one word, or the run fails.
func CommandToken(argv []string, o *CommandOptions) func(ctx context.Context) (string, error) {
	var opts CommandOptions
	if o != nil {
		opts = *o
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultCommandTimeout
	}
	argv = append([]string(nil), argv...)
	return func(ctx context.Context) (string, error) {
		if len(argv) == 0 {
			return "", &RenewError{Reason: "the token command is empty"}
		}
		ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = opts.Env
		cmd.Stderr = opts.Stderr
		var out limitedBuffer
		out.limit = maxCommandOutput
		cmd.Stdout = &out
		// A child that outlives the command (sh -c) must not hold the
		// run open past its kill.
		cmd.WaitDelay = 2 * time.Second
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case ctx.Err() == context.DeadlineExceeded:
			return "", &RenewError{Reason: fmt.Sprintf("the token command did not finish within %s", opts.Timeout)}
		case out.over:
			return "", &RenewError{Reason: fmt.Sprintf("the token command printed more than %d bytes", maxCommandOutput)}
		case errors.As(err, &exit):
			return "", &RenewError{Reason: fmt.Sprintf("the token command failed (%s)", exit.ProcessState)}
		case err != nil:
			return "", &RenewError{Reason: "the token command could not be run", Err: err}
		}
		tok := strings.TrimSpace(out.buf.String())
		switch {
		case tok == "":
			return "", &RenewError{Reason: "the token command printed no token"}
		case strings.ContainsAny(tok, " \t\r\n"):
			return "", &RenewError{Reason: "the token command printed more than one word; it must print the access token alone"}
		}
		return tok, nil
	}
}

// limitedBuffer is a buffer that refuses writes past limit. (It has no
// ReadFrom, which would bypass Write.)
type limitedBuffer struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.limit {
		b.over = true
		return 0, errors.New("output too large")
	}
	return b.buf.Write(p)
}

// SplitCommand splits a command line into its argv the way a POSIX shell
// splits words, and does nothing else: white space separates words,
// single quotes keep everything up to the next single quote, double
// quotes keep everything up to the next unescaped double quote (a
// backslash escapes ", \, $ and ` there), and a backslash outside quotes
// keeps the next character. Nothing is expanded ($VAR, ~, globs) and no
// operator (|, ;, >) is special: a pipeline needs sh -c '…'.
func SplitCommand(s string) ([]string, error) {
	var (
		argv []string
		word strings.Builder
		in   bool // a word has started (possibly empty: '')
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if in {
				argv = append(argv, word.String())
				word.Reset()
				in = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated single quote")
			}
			word.WriteString(s[i+1 : i+1+end])
			i += end + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				word.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			in = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("a backslash ends the command")
			}
			i++
			word.WriteByte(s[i])
			in = true
		default:
			word.WriteByte(c)
			in = true
		}
	}
	if in {
		argv = append(argv, word.String())
	}
	if len(argv) == 0 {
		return nil, errors.New("the command is empty")
	}
	return argv, nil
}

// OAuthClient obtains access tokens from an OAuth 2 token endpoint
// (golang.org/x/oauth2).
type OAuthClient struct {
	// TokenURL is the token endpoint.
	TokenURL string
	// ClientID and ClientSecret authenticate the client (HTTP Basic, or
	// the form where the endpoint wants it); a public client has no
	// secret and sends its client_id in the form.
	ClientID, ClientSecret string
	// Scopes are the scopes asked for (none: the issuer's default).
	Scopes []string
	// Resource is the RFC 8707 resource indicator sent with the client
	// credentials grant: the gateway's resource identifier, which the
	// token's aud must name.
	Resource string
	// HTTPClient sends the requests (default: one with a 30s timeout).
	HTTPClient *http.Client
}

// context returns ctx carrying the client's HTTP client for oauth2.
func (c OAuthClient) context(ctx context.Context) context.Context {
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

func (c OAuthClient) authStyle() oauth2.AuthStyle {
	if c.ClientSecret == "" {
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleAutoDetect
}

// ClientCredentials returns a Fetch that asks for a token with the client
// credentials grant (RFC 6749 §4.4) on every call.
func (c OAuthClient) ClientCredentials() func(ctx context.Context) (string, error) {
	cfg := &clientcredentials.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.TokenURL,
		Scopes: c.Scopes, AuthStyle: c.authStyle()}
	if c.Resource != "" {
		cfg.EndpointParams = url.Values{"resource": {c.Resource}}
	}
	return func(ctx context.Context) (string, error) {
		t, err := cfg.Token(c.context(ctx))
		if err != nil {
			return "", c.refusal(err)
		}
		return t.AccessToken, nil
	}
}

// RefreshToken returns a Fetch that redeems a refresh token (RFC 6749 §6)
// on every call: rt first, then the one each answer carries when the
// issuer rotates them. A rotated refresh token lives in this process
// only.
func (c OAuthClient) RefreshToken(rt string) func(ctx context.Context) (string, error) {
	cfg := &oauth2.Config{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Scopes: c.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: c.TokenURL, AuthStyle: c.authStyle()}}
	var mu sync.Mutex
	return func(ctx context.Context) (string, error) {
		// One redemption at a time: a rotated refresh token is good once.
		mu.Lock()
		defer mu.Unlock()
		t, err := cfg.TokenSource(c.context(ctx), &oauth2.Token{RefreshToken: rt}).Token()
		if err != nil {
			return "", c.refusal(err)
		}
		if t.RefreshToken != "" {
			rt = t.RefreshToken
		}
		return t.AccessToken, nil
	}
}

// refusal describes a failed token request.
func (c OAuthClient) refusal(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode == "" {
			return &RenewError{Reason: fmt.Sprintf("the token endpoint %s answered %s", c.TokenURL, re.Response.Status), Err: err}
		}
		reason := fmt.Sprintf("the token endpoint %s refused: %s", c.TokenURL, re.ErrorCode)
		if re.ErrorDescription != "" {
			reason += " (" + re.ErrorDescription + ")"
		}
		return &RenewError{Reason: reason} // the reason says all the error does
	}
	return &RenewError{Reason: fmt.Sprintf("the token endpoint %s could not be reached", c.TokenURL), Err: err}
}

// ResourceMetadata is the part of a gateway's RFC 9728 protected resource
// metadata a client reads.
type ResourceMetadata struct {
	// Resource is the gateway's resource identifier: the audience its
	// tokens must name.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuers whose tokens it accepts.
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// ResourceMetadata reads the gateway's protected resource metadata at the
// well-known URL under its base URL, where a gateway serving /v8 and /mcp
// under one resource identifier publishes it. It sends no token.
func (c *Client) ResourceMetadata(ctx context.Context) (*ResourceMetadata, error) {
	where := strings.TrimRight(c.base.String(), "/") + "/.well-known/oauth-protected-resource"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return nil, fmt.Errorf("restclient: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("restclient: the gateway does not answer: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("restclient: %s: %w", where, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("restclient: %s answered %d: the gateway serves no protected resource metadata", where, resp.StatusCode)
	}
	var meta ResourceMetadata
	if err := json.Unmarshal(b, &meta); err != nil || meta.Resource == "" {
		return nil, fmt.Errorf("restclient: %s holds no resource identifier", where)
	}
	return &meta, nil
}
