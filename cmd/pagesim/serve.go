package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pagesim/pagesim/internal/webserve"
)

// siteFS is the browser app build.sh writes into site/. A fresh clone
// holds only site/placeholder.txt, and serve says the site is not built.
//
//go:embed site
var siteFS embed.FS

const serveUsage = `Usage: pagesim serve [--addr HOST:PORT] [--dir DIR]

Serves the browser app on http://HOST:PORT/ (default localhost:8080): the
site embedded in this binary when it was built (run ./build.sh first, or
use make run), or the folder DIR that build.sh wrote. Precompressed .br
and .gz copies are sent to browsers that accept them. Files are streamed;
at most 64 connections are served at once, and a client that stops
reading or sending is dropped (docs/RELIABILITY.md). Stop with Ctrl-C.

Exit status: 0 after Ctrl-C, 1 when the address or folder cannot be used,
2 on a usage error, 3 on an internal error.
`

func init() {
	register(&command{name: "serve", summary: "serve the browser app on localhost", usage: serveUsage, run: cmdServe})
}

func cmdServe(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr)
}

// serve runs the server until ctx is done.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("serve", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	addr := fset.String("addr", "localhost:8080", "address to listen on")
	dir := fset.String("dir", "", "serve this folder instead of the embedded site")
	if code, err := parseFlags(fset, args); err != nil {
		fmt.Fprintf(stderr, "pagesim serve: %v (see 'pagesim serve --help')\n", err)
		return code
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "pagesim serve: unexpected argument %q (see 'pagesim serve --help')\n", fset.Arg(0))
		return exitUsage
	}
	var site fs.FS
	if *dir != "" {
		fi, err := os.Stat(*dir)
		if err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "pagesim serve: %s is not a folder\n", *dir)
			return exitInput
		}
		site = os.DirFS(*dir)
	} else {
		sub, err := fs.Sub(siteFS, "site")
		if err != nil {
			panic(err)
		}
		site = sub
	}
	if !webserve.Built(site) {
		where := "this binary was built before ./build.sh ran"
		if *dir != "" {
			where = *dir + " has no index.html"
		}
		fmt.Fprintf(stderr, "pagesim serve: warning: the site is not built (%s); run ./build.sh or make run\n", where)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "pagesim serve: %v\n", err)
		return exitInput
	}
	srv := webserve.Server(site)
	fmt.Fprintf(stdout, "pagesim: serving the browser app on %s (Ctrl-C to stop)\n", displayURL(*addr, ln.Addr()))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(webserve.LimitListener(ln, webserve.MaxConns)) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "pagesim serve: %v\n", err)
		return exitInput
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(stderr, "pagesim serve: %v\n", err)
	}
	return exitOK
}

// displayURL is the address to print: the host as the user gave it
// (localhost by default) with the port actually bound.
func displayURL(given string, bound net.Addr) string {
	host, _, err := net.SplitHostPort(given)
	_, port, err2 := net.SplitHostPort(bound.String())
	if err != nil || err2 != nil {
		return "http://" + bound.String() + "/"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
