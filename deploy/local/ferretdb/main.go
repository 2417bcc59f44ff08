// Command ferretdb is a minimal local-dev FerretDB server: the embeddable
// github.com/FerretDB/FerretDB/ferretdb package with the SQLite backend.
//
// It exists because `go install github.com/FerretDB/FerretDB/cmd/ferretdb@...`
// panics at start-up on a missing build/version/version.txt (that file is
// generated and not part of the module zip); the embeddable package does not
// need it. Built and cached by provision.sh next to this file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

const ferretModule = "github.com/FerretDB/FerretDB"

func ferretVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == ferretModule {
				return d.Version
			}
		}
	}
	return "unknown"
}

func main() {
	listenAddr := flag.String("listen-addr", "127.0.0.1:27017", "TCP address to listen on (host:port)")
	stateDir := flag.String("state-dir", "", "directory for the SQLite database files (sqlite handler; created if missing)")
	handler := flag.String("handler", "sqlite", "backend: sqlite or postgresql")
	postgresqlURL := flag.String("postgresql-url", "", "PostgreSQL URL (postgresql handler), e.g. postgres://user@127.0.0.1:5432/ferretdb")
	logLevel := flag.String("log-level", "info", "log level: debug, info, warn or error")
	showVersion := flag.Bool("version", false, "print the FerretDB version and exit")
	flag.Parse()

	if *showVersion {
		fmt.Println(ferretVersion())
		return
	}

	if err := run(*listenAddr, *handler, *stateDir, *postgresqlURL, *logLevel); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}
}

func run(listenAddr, handler, stateDir, postgresqlURL, logLevel string) error {
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(flag.Args(), " "))
	}
	if listenAddr == "" {
		return errors.New("-listen-addr must not be empty")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("invalid -log-level %q: %w", logLevel, err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(logger)

	config := ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: listenAddr},
		Logger:   logger,
		Handler:  handler,
	}
	switch handler {
	case "postgresql":
		if postgresqlURL == "" {
			return errors.New("-postgresql-url is required with -handler postgresql")
		}
		config.PostgreSQLURL = postgresqlURL
	case "sqlite":
		if stateDir == "" {
			return errors.New("-state-dir is required with -handler sqlite")
		}
		dir, err := filepath.Abs(stateDir)
		if err != nil {
			return fmt.Errorf("resolving -state-dir: %w", err)
		}
		if err = os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating -state-dir: %w", err)
		}
		// FerretDB's SQLite backend takes a directory URI that must end with a slash.
		config.SQLiteURL = "file:" + filepath.ToSlash(dir) + "/"
	default:
		return fmt.Errorf("unknown -handler %q (sqlite or postgresql)", handler)
	}

	f, err := ferretdb.New(&config)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger.Info("starting FerretDB",
		slog.String("version", ferretVersion()),
		slog.String("listen_addr", listenAddr),
		slog.String("handler", handler),
	)

	if err = f.Run(ctx); err != nil {
		return err
	}

	logger.Info("FerretDB stopped")
	return nil
}
