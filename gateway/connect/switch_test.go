package connect_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/connect"
	"github.com/praxa/praxa/gateway/workflow"
)

// TestSwitchRetiresAfterInflight swaps the Manager while a call runs on
// the old one: the call finishes there, new calls go to the new one, and
// the old one is closed once its call has returned.
func TestSwitchRetiresAfterInflight(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	oldSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`"old"`))
	}))
	defer oldSrv.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock() // before oldSrv.Close, which waits for the handler
	newSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`"new"`))
	}))
	defer newSrv.Close()
	manager := func(base string) *connect.Manager {
		return connect.New(map[string]config.Connection{"api": {Kind: "rest", BaseURL: base}}, &connect.Options{Logger: quiet()})
	}
	oldM, newM := manager(oldSrv.URL), manager(newSrv.URL)
	sw := connect.NewSwitch(oldM)
	run := sw.Runners()[config.ExecutorREST]
	x := config.Executor{Kind: "rest", Connection: "api", Method: "GET", Path: "/"}

	type result struct {
		out map[string]any
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := run.Run(context.Background(), x, workflow.Scope{})
		done <- result{out, err}
	}()
	<-entered
	sw.Swap(newM)
	if sw.Manager() != newM {
		t.Fatal("Swap did not make the new Manager current")
	}
	if oldM.Closed() {
		t.Fatal("the old Manager was closed while a call ran on it")
	}
	out, err := run.Run(context.Background(), x, workflow.Scope{})
	if err != nil || !strings.Contains(fmt.Sprint(out["body"]), "new") {
		t.Fatalf("a call after the swap: %v %v", out, err)
	}
	unblock()
	r := <-done
	if r.err != nil || !strings.Contains(fmt.Sprint(r.out["body"]), "old") {
		t.Fatalf("the call in flight: %v %v", r.out, r.err)
	}
	if !oldM.Closed() {
		t.Error("the old Manager is still open after its last call returned")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sw.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !newM.Closed() {
		t.Error("Close left the current Manager open")
	}
	// A swap after Close closes what it is given.
	late := manager(newSrv.URL)
	sw.Swap(late)
	if !late.Closed() {
		t.Error("a Manager swapped in after Close is open")
	}
}

// TestSwitchIdleSwapClosesAtOnce: with no call in flight, the old Manager
// is closed by Swap itself.
func TestSwitchIdleSwapClosesAtOnce(t *testing.T) {
	a := connect.New(nil, &connect.Options{Logger: quiet()})
	b := connect.New(nil, &connect.Options{Logger: quiet()})
	sw := connect.NewSwitch(a)
	sw.Swap(b)
	if !a.Closed() || b.Closed() {
		t.Fatalf("after an idle swap: old closed %v, new closed %v", a.Closed(), b.Closed())
	}
	if err := sw.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestSwitchForgetsClosedManagers: a retired Manager is dropped from the
// Switch once it is closed, at the swap when no call runs on it, else
// when its last call returns; reloads do not pile them up.
func TestSwitchForgetsClosedManagers(t *testing.T) {
	sw := connect.NewSwitch(connect.New(nil, &connect.Options{Logger: quiet()}))
	for range 5 {
		sw.Swap(connect.New(nil, &connect.Options{Logger: quiet()}))
	}
	if n := sw.Retired(); n != 0 {
		t.Fatalf("after 5 idle swaps %d retired Managers are held, want 0", n)
	}

	entered, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	}))
	defer srv.Close()
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	busy := connect.New(map[string]config.Connection{"api": {Kind: "rest", BaseURL: srv.URL}}, &connect.Options{Logger: quiet()})
	sw.Swap(busy)
	done := make(chan error, 1)
	go func() {
		_, err := sw.Runners()[config.ExecutorREST].Run(context.Background(), config.Executor{Kind: "rest", Connection: "api", Method: "GET", Path: "/"}, workflow.Scope{})
		done <- err
	}()
	<-entered
	sw.Swap(connect.New(nil, &connect.Options{Logger: quiet()}))
	if n := sw.Retired(); n != 1 {
		t.Fatalf("with a call in flight on the old Manager %d are held, want 1", n)
	}
	unblock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := sw.Retired(); n != 0 || !busy.Closed() {
		t.Fatalf("after the last call returned: %d retired held, closed %v", n, busy.Closed())
	}
	if err := sw.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
