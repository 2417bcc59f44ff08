package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// conn is one keep-alive connection with at most one request in flight.
type conn struct {
	fd         int
	busy, dead bool
	releasedAt time.Duration
	buf        []byte // bytes read and not yet parsed: buf[:n]
	n          int
	prefix     []byte // a 2xx answer's body must start with it
	answers    []answer
}

type answer struct {
	status     string
	releasedAt time.Duration
	// matched: the body starts with the expected prefix.
	matched bool
}

// The largest answer any target sends is a few hundred bytes; one that does not fit is malformed.
const readBuffer = 64 << 10

func dialAll(host string, port, count int, prefix []byte) ([]*conn, error) {
	ip, err := net.ResolveIPAddr("ip4", host)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	addr := &syscall.SockaddrInet4{Port: port}
	copy(addr.Addr[:], ip.IP.To4())
	conns := make([]*conn, 0, count)
	for range count {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("socket: %w", err)
		}
		c := &conn{fd: fd, buf: make([]byte, readBuffer), prefix: prefix, answers: make([]answer, 0, 4)}
		conns = append(conns, c)
		if err := syscall.Connect(fd, addr); err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("connecting to %s:%d: %w", host, port, err)
		}
		if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("TCP_NODELAY: %w", err)
		}
		if err := syscall.SetNonblock(fd, true); err != nil {
			closeAll(conns)
			return nil, fmt.Errorf("non-blocking: %w", err)
		}
	}
	return conns, nil
}

func closeAll(conns []*conn) {
	for _, c := range conns {
		syscall.Close(c.fd)
	}
}

// send writes one request whole. The socket holds nothing else, so its buffer takes a request of a
// few hundred bytes at once; should it not, the rest is written blocking rather than dropped.
func (c *conn) send(b []byte) error {
	for len(b) > 0 {
		n, err := syscall.Write(c.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if err := syscall.SetNonblock(c.fd, false); err != nil {
				return err
			}
			n, err = syscall.Write(c.fd, b)
			if e := syscall.SetNonblock(c.fd, true); err == nil {
				err = e
			}
			if err != nil {
				return err
			}
		case err != nil:
			return err
		}
		b = b[n:]
	}
	c.busy = true
	return nil
}

var errMalformed = errors.New("malformed response")

// Status texts, so that an answer's status costs no allocation.
var statuses = map[string]string{}

// receive reads what the socket holds and returns the whole answers in it (valid until the next
// receive); false once the connection is closed or failed, or sent something that is not an
// HTTP/1.1 answer with a Content-Length.
func (c *conn) receive() ([]answer, bool) {
	c.answers = c.answers[:0]
	for {
		if c.n == len(c.buf) {
			return c.answers, false // an answer larger than the buffer: not one of the targets'
		}
		n, err := syscall.Read(c.fd, c.buf[c.n:])
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return c.answers, true
		}
		if err != nil || n == 0 {
			return c.answers, false
		}
		c.n += n
		if err := c.parse(); err != nil {
			return c.answers, false
		}
	}
}

// parse takes every whole answer off the front of buf.
func (c *conn) parse() error {
	off := 0
	for {
		rest := c.buf[off:c.n]
		headEnd := bytes.Index(rest, []byte("\r\n\r\n"))
		if headEnd < 0 {
			break
		}
		head := rest[:headEnd]
		if len(head) < 12 || !bytes.HasPrefix(head, []byte("HTTP/1.")) {
			return errMalformed
		}
		length := -1
		for _, line := range bytes.Split(head, []byte("\r\n"))[1:] {
			name, value, ok := bytes.Cut(line, []byte(":"))
			if ok && strings.EqualFold(string(name), "content-length") {
				v, err := strconv.Atoi(string(bytes.TrimSpace(value)))
				if err != nil || v < 0 {
					return errMalformed
				}
				length = v
			}
		}
		if length < 0 {
			return errMalformed
		}
		end := headEnd + 4 + length
		if len(rest) < end {
			break
		}
		status, known := statuses[string(head[9:12])]
		if !known {
			status = string(head[9:12])
			statuses[status] = status
		}
		c.answers = append(c.answers, answer{
			status:     status,
			releasedAt: c.releasedAt,
			matched:    bytes.HasPrefix(rest[headEnd+4:end], c.prefix),
		})
		off += end
	}
	if off > 0 {
		c.n = copy(c.buf, c.buf[off:c.n])
	}
	return nil
}

// poller waits on every connection at once (epoll, level-triggered).
type poller struct {
	fd     int
	byFd   map[int32]*conn
	events []syscall.EpollEvent
	ready  []*conn
}

func newPoller(conns []*conn) (*poller, error) {
	fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	p := &poller{fd: fd, byFd: map[int32]*conn{}, events: make([]syscall.EpollEvent, len(conns)), ready: make([]*conn, 0, len(conns))}
	for _, c := range conns {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(c.fd)}
		if err := syscall.EpollCtl(fd, syscall.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
			syscall.Close(fd)
			return nil, fmt.Errorf("epoll_ctl: %w", err)
		}
		p.byFd[int32(c.fd)] = c
	}
	return p, nil
}

// wait returns the connections with something to read, after at most timeoutMs.
func (p *poller) wait(timeoutMs int) ([]*conn, error) {
	p.ready = p.ready[:0]
	n, err := syscall.EpollWait(p.fd, p.events, timeoutMs)
	if err == syscall.EINTR {
		return p.ready, nil
	}
	if err != nil {
		return nil, fmt.Errorf("epoll_wait: %w", err)
	}
	for _, ev := range p.events[:n] {
		if c := p.byFd[ev.Fd]; c != nil && !c.dead {
			p.ready = append(p.ready, c)
		}
	}
	return p.ready, nil
}

// remove stops watching a dead connection: a closed socket stays readable, and level-triggered
// epoll would wake for it on every wait.
func (p *poller) remove(c *conn) {
	_ = syscall.EpollCtl(p.fd, syscall.EPOLL_CTL_DEL, c.fd, nil)
	delete(p.byFd, int32(c.fd))
}

func (p *poller) close() { syscall.Close(p.fd) }

func cpuMs() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e6
}

// threadWaitMs is this thread's run_delay (the pacer's work all runs on it), or -1 where the kernel
// keeps no schedstats.
func threadWaitMs() float64 {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return -1
	}
	ns, err := strconv.ParseFloat(f[1], 64)
	if err != nil {
		return -1
	}
	return ns / 1e6
}
