// Command pacer is the constant-rate HTTP/1.1 load generator of bench/validate.ts's latency rounds.
//
// It keeps bench/paced-load.ts's rules: request i is due at start + i/rate, released when the pacer
// next wakes (at most about a millisecond later), handed to the first free keep-alive connection, and
// timed from its release to the end of its answer (wrk2's correction for coordinated omission: a
// server that falls behind pays for the queue it causes). What differs is the process: one thread on
// epoll, with no garbage collector at work while it runs and no runtime scheduler between a socket
// and its reader. The Node generator's event loop stalled for 4-53 ms per round on this machine, and
// each stall released its held-back requests at once, so part of the server's queue was the
// generator's doing (docs/benchmarks.md).
//
// The spec comes as JSON on stdin and the result goes as JSON to stdout (spec and result below).
// Linux only: it uses epoll and /proc.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"
)

type spec struct {
	Host             string   `json:"host"`
	Port             int      `json:"port"`
	Connections      int      `json:"connections"`
	Seconds          float64  `json:"seconds"`
	Rate             float64  `json:"rate"`
	Requests         []string `json:"requests"` // base64 of each request's bytes on the wire
	ExpectBodyPrefix string   `json:"expectBodyPrefix"`
	GraceSeconds     float64  `json:"graceSeconds"`
}

type result struct {
	LatenciesMs  []float64      `json:"latenciesMs"`
	ReleasedAtMs []float64      `json:"releasedAtMs"`
	Completed    int            `json:"completed"`
	StatusCodes  map[string]int `json:"statusCodes"`
	Mismatches   int            `json:"mismatches"`
	Errors       int            `json:"errors"`
	// Timeouts counts requests unanswered GraceSeconds after the last was due, and requests never
	// sent because every connection had failed.
	Timeouts int     `json:"timeouts"`
	Seconds  float64 `json:"seconds"`
	// LateMaxMs is the most the pacer woke after a request was due: the generator's own stall.
	LateMaxMs float64 `json:"lateMaxMs"`
	CPUMs     float64 `json:"cpuMs"`
	// WaitMs is how long the pacer's thread was runnable but off a CPU (schedstat run_delay); -1 if unknown.
	WaitMs float64 `json:"waitMs"`
}

func main() {
	// One thread does all the work; the runtime's other threads only idle.
	runtime.LockOSThread()
	var s spec
	if err := json.NewDecoder(os.Stdin).Decode(&s); err != nil {
		fail("reading the spec from stdin: %v", err)
	}
	if s.Connections < 1 || s.Rate <= 0 || s.Seconds <= 0 || len(s.Requests) == 0 || s.Port <= 0 || s.Port > 65535 {
		fail("the spec needs connections >= 1, rate > 0, seconds > 0, a port and at least one request")
	}
	if s.GraceSeconds <= 0 {
		s.GraceSeconds = 10
	}
	wire := make([][]byte, len(s.Requests))
	for i, r := range s.Requests {
		b, err := base64.StdEncoding.DecodeString(r)
		if err != nil || len(b) == 0 {
			fail("request %d is not base64 of a request", i)
		}
		wire[i] = b
	}
	total := int(s.Rate*s.Seconds + 0.5)
	r := &result{
		LatenciesMs:  make([]float64, 0, total),
		ReleasedAtMs: make([]float64, 0, total),
		StatusCodes:  map[string]int{},
	}
	// Everything the run keeps is allocated above; nothing it allocates after needs collecting
	// before the end, so the collector stays out of the timed stretch.
	debug.SetGCPercent(-1)
	if err := run(s, wire, total, r); err != nil {
		fail("%v", err)
	}
	debug.SetGCPercent(100)
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		fail("writing the result: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pacer: "+format+"\n", args...)
	os.Exit(1)
}

func run(s spec, wire [][]byte, total int, r *result) error {
	conns, err := dialAll(s.Host, s.Port, s.Connections, []byte(s.ExpectBodyPrefix))
	if err != nil {
		return err
	}
	loop, err := newPoller(conns)
	if err != nil {
		closeAll(conns)
		return err
	}
	defer loop.close()
	defer closeAll(conns)

	interval := time.Duration(float64(time.Second) / s.Rate)
	deadline := time.Duration((s.Seconds + s.GraceSeconds) * float64(time.Second))
	queue := make([]time.Duration, 0, total) // release times of requests waiting for a free connection
	head := 0                                // queue[head:] are still waiting
	released, sent, inFlight, alive := 0, 0, 0, len(conns)
	var lateMax time.Duration

	wait0, cpu0 := threadWaitMs(), cpuMs()
	start := time.Now()
	startEpochMs := float64(start.UnixNano()) / 1e6

	for {
		now := time.Since(start)
		if released < total {
			if dueAt := time.Duration(released) * interval; dueAt <= now && now-dueAt > lateMax {
				lateMax = now - dueAt
			}
			for released < total && time.Duration(released)*interval <= now {
				queue = append(queue, now)
				released++
			}
		}
		for _, c := range conns {
			if head == len(queue) {
				break
			}
			if c.busy || c.dead {
				continue
			}
			c.releasedAt = queue[head]
			head++
			if err := c.send(wire[sent%len(wire)]); err != nil {
				r.Errors++ // its request is lost with it, counted as the error
				c.dead = true
				loop.remove(c)
				alive--
				continue
			}
			sent++
			inFlight++
		}
		if released == total && head == len(queue) && inFlight == 0 {
			break
		}
		if alive == 0 {
			r.Timeouts = total - head // never sent: every connection failed
			break
		}
		if now >= deadline {
			r.Timeouts = inFlight + (len(queue) - head) + (total - released)
			break
		}
		timeout := deadline - now
		if released < total {
			timeout = time.Duration(released)*interval - now
		}
		// epoll's timeout is in whole milliseconds: round up, so a due request is never released early.
		ready, err := loop.wait(int((timeout + time.Millisecond - 1) / time.Millisecond))
		if err != nil {
			return err
		}
		for _, c := range ready {
			answers, ok := c.receive()
			for _, a := range answers {
				inFlight--
				c.busy = false
				r.StatusCodes[a.status]++
				if a.status[0] == '2' {
					if !a.matched {
						r.Mismatches++
					}
					at := time.Since(start)
					r.LatenciesMs = append(r.LatenciesMs, float64(at-a.releasedAt)/1e6)
					r.ReleasedAtMs = append(r.ReleasedAtMs, startEpochMs+float64(a.releasedAt)/1e6)
				}
			}
			if !ok && !c.dead {
				r.Errors++
				c.dead = true
				loop.remove(c)
				alive--
				if c.busy {
					inFlight-- // its request is lost with it, counted as the error
					c.busy = false
				}
			}
		}
	}
	r.Seconds = time.Since(start).Seconds()
	r.Completed = len(r.LatenciesMs)
	r.LateMaxMs = float64(lateMax) / 1e6
	r.CPUMs = cpuMs() - cpu0
	if w0, w1 := wait0, threadWaitMs(); w0 >= 0 && w1 >= 0 {
		r.WaitMs = w1 - w0
	} else {
		r.WaitMs = -1
	}
	return nil
}
