// ferretdb-embedded: FerretDB v1.x through its embeddable package, which avoids the panic of
// `go install .../cmd/ferretdb` (missing generated version file). Two backends:
//
//	ferretdb-embedded -listen 127.0.0.1:27017 -postgresql-url postgres://u@127.0.0.1:5432/ferretdb  # PostgreSQL (default)
//	ferretdb-embedded -listen 127.0.0.1:27017 -handler sqlite -dir /path/to/data                    # SQLite
//	ferretdb-embedded -ping 127.0.0.1:27017          # exit 0 if `ping` answers ok
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	handler := flag.String("handler", "postgresql", "backend: postgresql or sqlite")
	pgURL := flag.String("postgresql-url", "postgres://127.0.0.1:5432/ferretdb", "PostgreSQL URL (-handler postgresql)")
	dir := flag.String("dir", "data", "SQLite data directory, created if missing (-handler sqlite)")
	ping := flag.String("ping", "", "only ping the server at this address and exit")
	level := flag.String("log-level", "warn", "debug, info, warn or error (info logs every connection)")
	flag.Parse()

	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))

	if *ping != "" {
		if err := doPing(*ping); err != nil {
			fmt.Fprintln(os.Stderr, "ping failed:", err)
			os.Exit(1)
		}
		fmt.Println("ok")
		return
	}

	// Telemetry is disabled (and locked) by the embeddable package itself.
	cfg := &ferretdb.Config{Listener: ferretdb.ListenerConfig{TCP: *listen}, Handler: *handler}
	backend := ""
	switch *handler {
	case "postgresql":
		cfg.PostgreSQLURL = *pgURL
		backend = *pgURL
	case "sqlite":
		abs, err := filepath.Abs(*dir)
		if err == nil {
			err = os.MkdirAll(abs, 0o755)
		}
		if err != nil {
			slog.Error("data dir", "err", err)
			os.Exit(1)
		}
		cfg.SQLiteURL = "file:" + abs + "/"
		backend = cfg.SQLiteURL
	default:
		fmt.Fprintln(os.Stderr, "unknown -handler (postgresql or sqlite):", *handler)
		os.Exit(2)
	}
	f, err := ferretdb.New(cfg)
	if err != nil {
		slog.Error("ferretdb.New", "err", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	slog.Warn("FerretDB listening", "uri", f.MongoDBURI(), "handler", *handler, "backend", backend)
	if err := f.Run(ctx); err != nil {
		slog.Error("run", "err", err)
		os.Exit(1)
	}
	slog.Warn("FerretDB stopped")
}

func doPing(addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	opts := options.Client().ApplyURI("mongodb://" + addr + "/").
		SetServerSelectionTimeout(3 * time.Second).SetDirect(true)
	c, err := mongo.Connect(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Disconnect(context.Background())

	return c.Database("admin").RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err()
}
