package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
)

// servePprof serves Go's profiles (net/http/pprof) at the address in
// SMOOTHANON_PPROF, e.g. 127.0.0.1:6061, for the life of the process: a
// launcher with LOOPBACK workers, or a worker. Unset, nothing listens.
func servePprof() {
	addr := os.Getenv("SMOOTHANON_PPROF")
	if addr == "" {
		return
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "smoothanon: SMOOTHANON_PPROF: %v\n", err)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	go http.Serve(l, mux)
}
