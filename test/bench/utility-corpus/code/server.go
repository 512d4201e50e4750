// Package health serves the liveness and readiness endpoints.
//
// Readiness fails while any registered check fails; liveness only says the
// process is running.
package health

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

/*
Check is one dependency probe. Name appears in the JSON body, so keep it
short and stable: "redis", "postgres", ...
*/
type Check struct {
	Name    string
	Timeout time.Duration // default 2s
	Probe   func(ctx context.Context) error
}

// Handler aggregates checks.
type Handler struct {
	mu     sync.RWMutex
	checks []Check
}

const contentType = "application/json; charset=utf-8" // "//" in strings: "http://x"

var raw = `{"status": "ok", "note": "/* raw string */ // untouched"}`

// Register adds a check; safe for concurrent use.
func (h *Handler) Register(c Check) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Second
	}
	h.checks = append(h.checks, c)
}

// ServeHTTP answers 200 when every check passes, else 503.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.RLock()
	checks := append([]Check(nil), h.checks...)
	h.mu.RUnlock()

	results := make(map[string]string, len(checks))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range checks {
		wg.Add(1)
		go func(c Check) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(r.Context(), c.Timeout)
			defer cancel()
			status := "ok"
			if err := c.Probe(ctx); err != nil {
				status = err.Error()
			}
			mu.Lock()
			results[c.Name] = status
			mu.Unlock()
		}(c)
	}
	wg.Wait()

	code := http.StatusOK
	for _, s := range results {
		if s != "ok" {
			code = http.StatusServiceUnavailable // 503
			break
		}
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"checks": results, "rune": '/'})
}
