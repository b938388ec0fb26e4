package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/telemetry"
	"github.com/praxa/praxa/gateway/workflow"
)

// An llm connection is a server that speaks the OpenAI-compatible
// chat-completions protocol (POST {baseUrl}/chat/completions), as Ollama,
// vLLM, llama.cpp's server and the hosted providers do. One llm call is
// one request, or two when the first answer does not satisfy the
// executor's outputSchema (one repair request, within the same token and
// time budgets). A chat completion changes nothing upstream, so a request
// left without an answer is a failure of the call, never an unknown
// outcome, and the engine may send it again under the capability's
// retries (Repeatable).

// maxLLMAnswer bounds the body of a chat-completion answer.
const maxLLMAnswer = 4 << 20

// llmConn is one llm connection.
type llmConn struct {
	name    string
	cfg     config.Connection
	log     *slog.Logger
	getenv  func(string) string
	client  *http.Client
	secrets []string
}

func newLLMConn(name string, c config.Connection, o *Options) *llmConn {
	return &llmConn{name: name, cfg: c, log: o.Logger.With("connection", name), getenv: o.Getenv, secrets: secretValues(c, o.Getenv),
		client: &http.Client{Transport: newTransport(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// llmRunner runs llm executors.
type llmRunner struct{ m *Manager }

// chatMessage is one message of a chat-completions request.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest is the body of POST /chat/completions.
type chatRequest struct {
	Model          string         `json:"model"`
	Messages       []chatMessage  `json:"messages"`
	MaxTokens      int            `json:"max_tokens"`
	Stream         bool           `json:"stream"`
	ResponseFormat map[string]any `json:"response_format,omitempty"`
}

// chatAnswer is what a chat completion answered: the first choice's
// content and finish reason, the model that answered and the tokens spent.
type chatAnswer struct {
	Content      string
	FinishReason string
	Model        string
	Usage        tokenUsage
}

// tokenUsage counts tokens as the protocol's usage member does.
type tokenUsage struct {
	Prompt, Completion, Total int64
}

func (u *tokenUsage) add(v tokenUsage) {
	u.Prompt += v.Prompt
	u.Completion += v.Completion
	u.Total += v.Total
}

// parseChatCompletion reads the body of a chat-completions answer: the
// first choice's message content (a string, or a list of text parts),
// its finish_reason, the model, and the usage (absent counts are 0). An
// answer that is not a JSON object with at least one choice carrying a
// message is refused with what is wrong; counts that are not
// non-negative integers are refused too.
func parseChatCompletion(body []byte) (chatAnswer, error) {
	var raw struct {
		Model   any `json:"model"`
		Choices []struct {
			Message *struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			FinishReason any `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			Prompt     json.Number `json:"prompt_tokens"`
			Completion json.Number `json:"completion_tokens"`
			Total      json.Number `json:"total_tokens"`
		} `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return chatAnswer{}, fmt.Errorf("the answer is not a chat completion (a JSON object): %s", clip(err.Error(), 200))
	}
	if d.More() {
		return chatAnswer{}, errors.New("the answer is not one JSON object")
	}
	if len(raw.Choices) == 0 || raw.Choices[0].Message == nil {
		if msg := upstreamError(raw.Error); msg != "" {
			return chatAnswer{}, fmt.Errorf("the model server answered an error: %s", msg)
		}
		return chatAnswer{}, errors.New("the answer has no choice with a message")
	}
	var a chatAnswer
	a.Model, _ = raw.Model.(string)
	a.FinishReason, _ = raw.Choices[0].FinishReason.(string)
	content, err := messageContent(raw.Choices[0].Message.Content)
	if err != nil {
		return chatAnswer{}, err
	}
	a.Content = content
	if u := raw.Usage; u != nil {
		for _, f := range []struct {
			n   json.Number
			dst *int64
		}{{u.Prompt, &a.Usage.Prompt}, {u.Completion, &a.Usage.Completion}, {u.Total, &a.Usage.Total}} {
			if f.n == "" {
				continue
			}
			v, err := f.n.Int64()
			if err != nil || v < 0 {
				return chatAnswer{}, fmt.Errorf("the answer's usage holds %s, which is not a token count", clip(f.n.String(), 40))
			}
			*f.dst = v
		}
		if a.Usage.Total == 0 {
			a.Usage.Total = a.Usage.Prompt + a.Usage.Completion
		}
	}
	return a, nil
}

// messageContent reads a message's content: a string, null (no text), or
// a list of parts whose text parts are joined.
func messageContent(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("the message's content is neither text nor a list of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// upstreamError reads the error member of an OpenAI-style error answer:
// {"error": {"message": …}} or {"error": "…"}.
func upstreamError(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clip(s, 300)
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return clip(o.Message, 300)
	}
	return ""
}

// answerJSON reads a model's answer as one JSON value: the whole text, or
// the body of a single fenced code block (```json … ```), which models
// often add. It reports false when the text holds no JSON value alone.
func answerJSON(text string) (any, bool) {
	s := strings.TrimSpace(text)
	if strings.HasPrefix(s, "```") && strings.HasSuffix(s, "```") && len(s) >= 6 {
		s = strings.TrimSuffix(s[3:], "```")
		if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[\"") {
			s = s[i+1:] // the fence's language tag
		}
		s = strings.TrimSpace(s)
	}
	if s == "" {
		return nil, false
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

// Run asks the connection's model: the system message (when set) and the
// prompt, each a template filled from the scope (config.RenderPrompt),
// with max_tokens the executor's budget. Without outputSchema the output
// is the answer's text; with it, the text must be one JSON value that
// satisfies the schema, given as json in the output: an answer that does
// not is shown its problems in one repair request with the budget left,
// and a second miss fails the call. The output also holds the model, the
// finish reason, the tokens spent (usage: prompt, completion and total,
// over every request, and requests) and the budget (maxTokens, timeoutMs).
// The API key is read from the environment for each call and sent as a
// bearer token; no message carries it.
func (r llmRunner) Run(ctx context.Context, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	c, ok := r.m.llm[x.Connection]
	if !ok {
		return nil, noConnection(config.ExecutorLLM, x.Connection)
	}
	var schema *jsonschema.Schema
	var schemaText []byte
	if x.OutputSchema != nil {
		var err error
		schemaText, _ = json.Marshal(x.OutputSchema)
		if schema, err = contracts.CompileSchema("outputSchema", schemaText); err != nil {
			return nil, c.failed(nil, "the executor's outputSchema does not compile: %v", err)
		}
	}
	key := ""
	if c.cfg.APIKey != "" {
		var missing []string
		key, missing = config.Interpolate(c.cfg.APIKey, c.getenv)
		if len(missing) > 0 {
			return nil, unavailable(config.ExecutorLLM, c.name, "the API key's environment variable %s is not set; nothing was sent", strings.Join(missing, ", "))
		}
	}
	budget := x.MaxTokens
	if budget <= 0 {
		budget = config.DefaultLLMMaxTokens
	}
	limit := timeout(x)
	fill := func(tmpl string) string {
		return config.RenderPrompt(tmpl, func(path string) any { return workflow.Resolve(path, scope) }, func(v any) string {
			b, _ := json.Marshal(v)
			return string(b)
		})
	}
	var msgs []chatMessage
	system := fill(x.System)
	if schema != nil {
		rule := "Answer with one JSON value and nothing else. It must satisfy this JSON Schema: " + string(schemaText)
		system = strings.TrimSpace(system + "\n\n" + rule)
	}
	if system != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: system})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: fill(x.Prompt)})

	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	start := time.Now()
	var used tokenUsage
	requests := 0
	record := func(a chatAnswer) map[string]any {
		return map[string]any{
			"model": a.Model, "finishReason": a.FinishReason,
			"usage": map[string]any{"promptTokens": used.Prompt, "completionTokens": used.Completion, "totalTokens": used.Total,
				"requests": requests, "elapsedMs": time.Since(start).Milliseconds()},
			"budget": map[string]any{"maxTokens": budget, "timeoutMs": limit.Milliseconds()},
		}
	}
	ask := func(maxTokens int) (chatAnswer, error) {
		req := chatRequest{Model: c.cfg.Model, Messages: msgs, MaxTokens: maxTokens}
		if schema != nil {
			req.ResponseFormat = map[string]any{"type": "json_schema",
				"json_schema": map[string]any{"name": "output", "schema": x.OutputSchema}}
		}
		requests++
		a, err := c.complete(ctx, key, req)
		used.add(a.Usage)
		return a, err
	}
	a, err := ask(budget)
	if err != nil {
		return nil, c.withUsage(err, record(a))
	}
	if schema == nil {
		out := record(a)
		out["text"] = a.Content
		return out, nil
	}
	v, problem := checkAnswer(schema, a.Content)
	if problem == "" {
		out := record(a)
		out["text"], out["json"] = a.Content, v
		return out, nil
	}
	left := budget - int(used.Completion)
	if left <= 0 {
		out := record(a)
		out["text"] = a.Content
		return nil, c.failed(out, "the answer does not satisfy the output schema (%s), and the token budget of %d is spent: no repair was asked", problem, budget)
	}
	msgs = append(msgs, chatMessage{Role: "assistant", Content: a.Content},
		chatMessage{Role: "user", Content: "That answer does not satisfy the JSON Schema: " + problem + ". Answer again with one JSON value that satisfies it, and nothing else."})
	a2, err := ask(left)
	if err != nil {
		return nil, c.withUsage(err, record(a2))
	}
	v, problem2 := checkAnswer(schema, a2.Content)
	out := record(a2)
	out["text"] = a2.Content
	if problem2 != "" {
		return nil, c.failed(out, "the answer does not satisfy the output schema (%s), nor does the repaired one (%s)", problem, problem2)
	}
	out["json"] = v
	out["repaired"] = true
	return out, nil
}

// checkAnswer reads text as JSON and validates it against schema: the
// value, or what is wrong with it ("" when nothing).
func checkAnswer(schema *jsonschema.Schema, text string) (any, string) {
	v, ok := answerJSON(text)
	if !ok {
		return nil, "it is not one JSON value"
	}
	if err := contracts.Validate(schema, v, "the answer does not match the output schema"); err != nil {
		var parts []string
		for _, f := range contracts.AsError(err).Fields {
			p := f.Pointer
			if p == "" {
				p = "the value"
			}
			parts = append(parts, p+" "+f.Detail)
		}
		if len(parts) == 0 {
			return nil, "it does not match"
		}
		return nil, clip(strings.Join(parts, "; "), 500)
	}
	return v, ""
}

// failed is the error of an llm call the model server answered without
// success (or whose answer does not serve).
func (c *llmConn) failed(out map[string]any, format string, args ...any) *workflow.ExecutorError {
	return &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorLLM, Connection: c.name,
		Message: redact(fmt.Sprintf(format, args...), c.secrets), Output: out}
}

// withUsage gives err's ExecutorError (a copy) the usage and budget of
// rec as its Output, when it has none.
func (c *llmConn) withUsage(err error, rec map[string]any) error {
	var xe *workflow.ExecutorError
	if !errors.As(err, &xe) {
		return err
	}
	cp := *xe
	if cp.Output == nil {
		cp.Output = map[string]any{}
	}
	cp.Output["usage"], cp.Output["budget"] = rec["usage"], rec["budget"]
	return &cp
}

// complete sends one chat-completions request and reads its answer. A
// server that could not be reached, or that refused the request before
// generating (408, 429, 5xx), answers unavailable; a request left without
// an answer fails, Repeatable (nothing changed upstream); any other
// answer that is not a chat completion fails with what the server said.
func (c *llmConn) complete(ctx context.Context, key string, req chatRequest) (chatAnswer, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return chatAnswer{}, c.failed(nil, "the request cannot be encoded: %v", err)
	}
	target := strings.TrimRight(c.cfg.BaseURL, "/") + "/chat/completions"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return chatAnswer{}, c.failed(nil, "the request cannot be built: %s", transportReason(err))
	}
	for k, v := range c.cfg.Headers {
		s, _ := config.Interpolate(v, c.getenv)
		hr.Header.Set(k, s)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if key != "" {
		hr.Header.Set("Authorization", "Bearer "+key)
	}
	if tp := workflow.Traceparent(ctx); tp != "" {
		hr.Header.Set("Traceparent", tp)
	}
	span := telemetry.StartHTTPClient(ctx, hr, "/chat/completions")
	resp, err := c.client.Do(hr)
	telemetry.EndHTTPClient(span, resp, err)
	if err != nil {
		if isDialError(err) {
			return chatAnswer{}, unavailable(config.ExecutorLLM, c.name, "cannot reach %s: %s", hr.URL.Host, redact(transportReason(err), c.secrets))
		}
		return chatAnswer{}, &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorLLM, Connection: c.name, Repeatable: true,
			Message: "no answer from the model server: " + redact(transportReason(err), c.secrets)}
	}
	raw, rerr := io.ReadAll(io.LimitReader(resp.Body, maxLLMAnswer))
	resp.Body.Close()
	st := resp.StatusCode
	if rerr != nil {
		return chatAnswer{}, &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorLLM, Connection: c.name, Repeatable: true,
			Message: fmt.Sprintf("the model server answered %d, then the answer broke off: %s", st, redact(transportReason(rerr), c.secrets))}
	}
	if st < 200 || st > 299 {
		var e struct {
			Error json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		said := upstreamError(e.Error)
		if said == "" {
			said = clip(strings.TrimSpace(string(raw)), 200)
		}
		msg := redact(fmt.Sprintf("the model server answered %d: %s", st, said), c.secrets)
		xe := &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: config.ExecutorLLM, Connection: c.name, Message: msg,
			Output: map[string]any{"status": st}}
		if st == http.StatusRequestTimeout || st == http.StatusTooManyRequests || st >= 500 {
			xe.Outcome = workflow.OutcomeUnavailable
			if ra, ok := retryAfter(resp.Header.Get("Retry-After")); ok && ra > 0 {
				xe.RetryAfter = min(ra, config.MaxRetryAfter)
			}
		}
		return chatAnswer{}, xe
	}
	a, err := parseChatCompletion(raw)
	if err != nil {
		return chatAnswer{}, c.failed(nil, "%v", err)
	}
	return a, nil
}
