package connect_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

// chatServer is a model server at the protocol level: it speaks the
// OpenAI-compatible chat-completions protocol (POST /v1/chat/completions)
// over real HTTP, and answers each request with what reply decides from
// the request's last user message. No model runs here (there are no
// weights on this machine); the protocol is what the llm executor
// depends on.
type chatServer struct {
	mu       sync.Mutex
	requests []chatRequest
	auth     []string
	srv      *httptest.Server
}

type chatRequest struct {
	Model          string            `json:"model"`
	Messages       []json.RawMessage `json:"messages"`
	MaxTokens      int               `json:"max_tokens"`
	Stream         bool              `json:"stream"`
	ResponseFormat map[string]any    `json:"response_format"`
}

// lastUser returns the content of the request's last user message.
func (r chatRequest) lastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		var m struct{ Role, Content string }
		json.Unmarshal(r.Messages[i], &m)
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// system returns the content of the request's system message.
func (r chatRequest) system() string {
	var m struct{ Role, Content string }
	if len(r.Messages) > 0 && json.Unmarshal(r.Messages[0], &m) == nil && m.Role == "system" {
		return m.Content
	}
	return ""
}

// reply is a model's answer: the status, the content and the completion
// tokens it reports (0: the length of the content in words).
type reply struct {
	status     int
	content    string
	completion int
	delay      time.Duration
	body       string // sent as it is when set
}

func newChatServer(t *testing.T, answer func(n int, req chatRequest) reply) *chatServer {
	t.Helper()
	s := &chatServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
			return
		}
		var req chatRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		n := len(s.requests)
		s.mu.Unlock()
		rep := answer(n, req)
		if rep.delay > 0 {
			select {
			case <-time.After(rep.delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if rep.status != 0 {
			w.WriteHeader(rep.status)
		}
		if rep.body != "" {
			w.Write([]byte(rep.body))
			return
		}
		completion := rep.completion
		if completion == 0 {
			completion = len(strings.Fields(rep.content))
		}
		b, _ := json.Marshal(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": rep.content}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": completion, "total_tokens": 10 + completion},
		})
		w.Write(b)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *chatServer) got() ([]chatRequest, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]chatRequest(nil), s.requests...), append([]string(nil), s.auth...)
}

const llmYAML = `
connections:
  model:
    kind: llm
    baseUrl: PRIMARY/v1
    model: tiny-chat
    apiKey: ${PRAXA_TEST_LLM_KEY}
  nokey:
    kind: llm
    baseUrl: PRIMARY/v1
    model: tiny-chat
    apiKey: ${PRAXA_TEST_LLM_UNSET}
workflows:
  review:
    version: 1
    title: Review
    initial: open
    states:
      open: {}
      done: {terminal: true}
    transitions:
      - name: summarise
        from: open
        to: done
        executor:
          kind: llm
          connection: model
          system: You review changes to {{$.context.repo}}.
          prompt: "Summarise {{ $.arguments.title }}: {{$.arguments.files}}"
          maxTokens: 64
        set: {summary: $.output.text}
      - name: classify
        from: open
        to: done
        executor:
          kind: llm
          connection: model
          prompt: "Classify {{$.arguments.title}}"
          maxTokens: 50
          timeoutMs: 1500
          outputSchema:
            type: object
            required: [risk]
            additionalProperties: false
            properties:
              risk: {enum: [low, high]}
        set: {risk: $.output.json.risk}
      - name: nokey
        from: open
        to: done
        executor: {kind: llm, connection: nokey, prompt: hello}
`

// llmRun starts the review workflow with context repo set and fires
// transition with args.
func llmRun(t *testing.T, e *workflow.Engine, transition string, args map[string]any) (*workflow.Outcome, error) {
	t.Helper()
	in := &workflow.Instance{ID: "wf_1", Tenant: "t", DefinitionID: "review", DefinitionVersion: 1, State: "open", Version: 1,
		Context: map[string]any{"repo": "praxa"}, Input: map[string]any{}, Evidence: []string{}}
	return e.Fire(context.Background(), in, transition, args)
}

// firedAttempts returns the attempts of the outcome's transition.fired
// event.
func firedAttempts(t *testing.T, out *workflow.Outcome) []map[string]any {
	t.Helper()
	for _, ev := range out.Events {
		if ev.Type == "transition.fired" {
			list, _ := ev.Attributes["attempts"].([]any)
			var got []map[string]any
			for _, a := range list {
				got = append(got, a.(map[string]any))
			}
			return got
		}
	}
	t.Fatal("no transition.fired event")
	return nil
}

func llmEngine(t *testing.T, s *chatServer, key string) *workflow.Engine {
	t.Helper()
	cfg, err := config.Parse("praxec.yaml", []byte(strings.ReplaceAll(llmYAML, "PRIMARY", s.srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PRAXA_TEST_LLM_KEY": key}
	m, reg, problems, err := connect.Setup(context.Background(), cfg, &connect.Options{Logger: quiet(), Getenv: func(k string) string { return env[k] }})
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	t.Cleanup(func() { m.Close() })
	return &workflow.Engine{Registry: reg, Runners: m.Runners(), NewID: func(p string) string { return p + "_x" }}
}

// TestLLMText: the prompt and system templates are filled from the
// arguments and the context, the model, budget and key are sent as the
// protocol says, and the answer's text, usage and budget are the output;
// the usage is in the audit event.
func TestLLMText(t *testing.T) {
	const key = "sk-test-0123456789"
	s := newChatServer(t, func(int, chatRequest) reply { return reply{content: "Two files change the parser."} })
	e := llmEngine(t, s, key)
	out, err := llmRun(t, e, "summarise", map[string]any{"title": "Fix the lexer", "files": []any{"a.go", "b.go"}})
	if err != nil {
		t.Fatal(err)
	}
	reqs, auth := s.got()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "tiny-chat" || r.MaxTokens != 64 || r.Stream || auth[0] != "Bearer "+key {
		t.Errorf("request model %q max_tokens %d stream %v auth %q", r.Model, r.MaxTokens, r.Stream, auth[0])
	}
	if got := r.lastUser(); got != `Summarise Fix the lexer: ["a.go","b.go"]` {
		t.Errorf("prompt %q", got)
	}
	if got := r.system(); got != "You review changes to praxa." {
		t.Errorf("system %q", got)
	}
	if got := out.Instance.Context["summary"]; got != "Two files change the parser." {
		t.Errorf("summary %v", got)
	}
	att := firedAttempts(t, out)
	if len(att) != 1 {
		t.Fatalf("attempts %v", att)
	}
	usage := att[0]["usage"].(map[string]any)
	u := usage["usage"].(map[string]any)
	if u["promptTokens"] != int64(10) || u["completionTokens"] != int64(5) || u["totalTokens"] != int64(15) || u["requests"] != 1 {
		t.Errorf("usage %v", u)
	}
	if b := usage["budget"].(map[string]any); b["maxTokens"] != 64 || b["timeoutMs"] != int64(60000) {
		t.Errorf("budget %v", b)
	}
	if strings.Contains(fmt.Sprint(out.Events), key) {
		t.Error("the API key is in an audit event")
	}
}

// TestLLMOutputSchema: an answer is read as JSON and validated; one that
// does not satisfy the schema gets one repair request with the problems
// and the budget left, and a second miss fails the call.
func TestLLMOutputSchema(t *testing.T) {
	tests := []struct {
		name     string
		replies  []reply
		requests int
		want     string // the risk set, or "" for a failure
		failure  string
	}{
		{name: "Valid", replies: []reply{{content: `{"risk":"low"}`}}, requests: 1, want: "low"},
		{name: "Fenced", replies: []reply{{content: "```json\n{\"risk\":\"high\"}\n```"}}, requests: 1, want: "high"},
		{name: "Repaired", replies: []reply{{content: "It looks risky to me."}, {content: `{"risk":"high"}`}}, requests: 2, want: "high"},
		{name: "RepairFails", replies: []reply{{content: `{"risk":"medium"}`}, {content: `{"risk":"unknown"}`}}, requests: 2,
			failure: "nor does the repaired one"},
		{name: "BudgetSpent", replies: []reply{{content: `{"risk":1}`, completion: 50}}, requests: 1, failure: "token budget of 50 is spent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newChatServer(t, func(n int, _ chatRequest) reply { return tt.replies[min(n, len(tt.replies))-1] })
			e := llmEngine(t, s, "k-123456")
			out, err := llmRun(t, e, "classify", map[string]any{"title": "Drop the users table"})
			reqs, _ := s.got()
			if len(reqs) != tt.requests {
				t.Errorf("%d requests, want %d", len(reqs), tt.requests)
			}
			if !strings.Contains(reqs[0].system(), `"required":["risk"]`) || reqs[0].ResponseFormat["type"] != "json_schema" {
				t.Errorf("the schema was not asked for: system %q, response_format %v", reqs[0].system(), reqs[0].ResponseFormat)
			}
			if tt.requests == 2 {
				if !strings.Contains(reqs[1].lastUser(), "does not satisfy") || reqs[1].MaxTokens >= 50 || len(reqs[1].Messages) != 4 {
					t.Errorf("repair request: %d messages, max_tokens %d, %q", len(reqs[1].Messages), reqs[1].MaxTokens, reqs[1].lastUser())
				}
			}
			if tt.failure != "" {
				ce := contracts.AsError(err)
				if ce.Code != contracts.CodeUpstreamFailed || !strings.Contains(ce.Message, tt.failure) {
					t.Fatalf("%v, want a failure saying %q", err, tt.failure)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Instance.Context["risk"]; got != tt.want {
				t.Errorf("risk %v, want %s", got, tt.want)
			}
			u := firedAttempts(t, out)[0]["usage"].(map[string]any)["usage"].(map[string]any)
			if u["requests"] != tt.requests {
				t.Errorf("usage %v", u)
			}
		})
	}
}

// TestLLMFailures: what the model server answers decides the outcome; the
// API key never reaches a message.
func TestLLMFailures(t *testing.T) {
	const key = "sk-secret-abcdef123456"
	tests := []struct {
		name       string
		transition string
		reply      reply
		code       contracts.Code
		says       string
	}{
		{name: "KeyRefused", transition: "summarise", reply: reply{status: 401, body: `{"error":{"message":"Incorrect API key provided: ` + key + `"}}`},
			code: contracts.CodeUpstreamFailed, says: "answered 401: Incorrect API key provided: [redacted]"},
		{name: "Overloaded", transition: "summarise", reply: reply{status: 429, body: `{"error":"slow down"}`}, code: contracts.CodeUnavailable, says: "answered 429: slow down"},
		{name: "NotAChatCompletion", transition: "summarise", reply: reply{body: `{"object":"list","data":[]}`}, code: contracts.CodeUpstreamFailed, says: "no choice with a message"},
		{name: "OutOfTime", transition: "classify", reply: reply{content: `{"risk":"low"}`, delay: 5 * time.Second}, code: contracts.CodeUpstreamFailed, says: "no answer from the model server: timed out"},
		{name: "KeyUnset", transition: "nokey", code: contracts.CodeUnavailable, says: "PRAXA_TEST_LLM_UNSET is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newChatServer(t, func(int, chatRequest) reply { return tt.reply })
			e := llmEngine(t, s, key)
			_, err := llmRun(t, e, tt.transition, map[string]any{"title": "x"})
			ce := contracts.AsError(err)
			if ce.Code != tt.code || !strings.Contains(ce.Message, tt.says) {
				t.Fatalf("%v (%s), want %s saying %q", err, ce.Code, tt.code, tt.says)
			}
			if strings.Contains(ce.Message, key) {
				t.Error("the API key is in the message")
			}
			if reqs, _ := s.got(); tt.transition == "nokey" && len(reqs) != 0 {
				t.Error("a request was sent without its key")
			}
		})
	}
}
